"""The ``threadless`` command (also ``python -m threadless``): ``threadless mcp`` runs the MCP
server (``pip install 'threadless[mcp]'``). Over HTTP it requires callers to send
``Authorization: Bearer <THREADLESS_MCP_TOKEN>`` and does not start without that token, on any host;
a request's Host and Origin must name the listening address or an ``--allowed-host``."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def _envbool(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _envlist(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="threadless", description="Threadless command-line tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    mcp = commands.add_parser("mcp", help="Run an MCP server over one project's memories.")
    mcp.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default) or streamable HTTP (needs env THREADLESS_MCP_TOKEN: callers send "
        "Authorization: Bearer <token>).",
    )
    mcp.add_argument(
        "--host", default="127.0.0.1", help="HTTP: the address to listen on (default 127.0.0.1)."
    )
    mcp.add_argument("--port", type=int, default=8765, help="HTTP: the port (default 8765).")
    mcp.add_argument("--path", default="/mcp", help="HTTP: the endpoint path (default /mcp).")
    mcp.add_argument(
        "--memory",
        default=os.environ.get("THREADLESS_MCP_MEMORY"),
        help="Default memory of every tool: a memory id or your external id (env THREADLESS_MCP_MEMORY).",
    )
    mcp.add_argument(
        "--memory-only",
        action="store_true",
        default=_envbool("THREADLESS_MCP_MEMORY_ONLY"),
        help="Keep every tool to --memory: a call naming another memory is refused "
        "(env THREADLESS_MCP_MEMORY_ONLY=1).",
    )
    mcp.add_argument(
        "--allowed-host",
        action="append",
        default=_envlist("THREADLESS_MCP_ALLOWED_HOSTS"),
        metavar="HOST",
        help="HTTP: a host name clients reach the server by, besides --host (repeatable; env "
        "THREADLESS_MCP_ALLOWED_HOSTS, comma-separated). Other Host headers are refused (421), and "
        "browser Origins on other hosts (403).",
    )
    mcp.add_argument("--api-key", default=None, help="A project key (default: env THREADLESS_API_KEY).")
    mcp.add_argument(
        "--base-url", default=None, help="The server's origin (default: env THREADLESS_BASE_URL)."
    )
    mcp.add_argument("--timeout", type=float, default=10.0, help="Seconds per Threadless call (default 10).")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per Threadless call is noise
    try:
        from .integrations.mcp_server import build_server
    except ImportError as exc:  # the optional dependency is missing
        print(f"threadless mcp needs the mcp package ({exc}): pip install 'threadless[mcp]'", file=sys.stderr)
        return 2
    from . import ThreadlessError
    from .integrations.mcp_server import MIN_TOKEN_CHARS, http_app

    token = os.environ.get("THREADLESS_MCP_TOKEN", "")
    if args.transport == "http" and len(token.strip()) < MIN_TOKEN_CHARS:
        print(
            f"threadless mcp: --transport http needs THREADLESS_MCP_TOKEN (at least {MIN_TOKEN_CHARS} "
            "characters; callers send Authorization: Bearer <token>). Make one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'",
            file=sys.stderr,
        )
        return 2
    if args.memory_only and not args.memory:
        print(
            "threadless mcp: --memory-only needs --memory (the one memory the tools take).", file=sys.stderr
        )
        return 2
    try:
        server = build_server(
            api_key=args.api_key,
            base_url=args.base_url,
            timeout=args.timeout,
            memory=args.memory,
            memory_only=args.memory_only,
        )
    except ThreadlessError as error:
        print(f"threadless mcp: {error}", file=sys.stderr)
        return 2
    if args.transport == "stdio":
        server.run("stdio")
    else:
        import uvicorn

        app = http_app(
            server, token=token.strip(), host=args.host, path=args.path, extra_hosts=args.allowed_host
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
