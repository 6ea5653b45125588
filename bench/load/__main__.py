"""`python -m bench.load`: the command line of the load bench (`make bench-load`, `make bench-servers`);
what it runs is described in bench/load/__init__.py."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.common import DOCS, machine
from bench.load.config import VAR, log
from bench.load.phases import in_process, run_interleaved, run_servers, run_stack
from bench.load.report import chart, section, write_doc
from bench.load.stacks import INTERLEAVE, SERVERS, STACKS
from bench.load.statistics import cpu_share, pair_summary, schedule


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load")
    parser.add_argument("--phase", type=float, default=6.0, help="seconds per phase")
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--stacks", default="floor-sqlite,embedded,floor-pg,postgres")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("THREADLESS_WEB_THREADS", "0")),
        help="threads per process for every stack (default: each stack's own default)",
    )
    parser.add_argument("--doc", default=str(DOCS / "benchmarks.md"))
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--from-json", default="", help="only rewrite the doc from a saved results.json")
    parser.add_argument(
        "--interleave",
        default="",
        help="product:floor pairs measured in interleaved blocks, comma-separated (default: "
        "embedded:floor-sqlite and postgres:floor-pg, those whose two stacks are in --stacks; "
        "'none': no blocks). A stack paired with itself runs as two instances.",
    )
    parser.add_argument("--pairs", type=int, default=8, help="interleaved: pairs of blocks (ABBA)")
    parser.add_argument(
        "--block",
        type=float,
        default=0.0,
        help="interleaved: seconds per block (default: --phase, so that a block is a phase's workload)",
    )
    parser.add_argument(
        "--warm", type=float, default=2.0, help="interleaved: seconds of warm-up per stack, not counted"
    )
    parser.add_argument("--interleave-clients", type=int, default=16, help="interleaved: clients per block")
    parser.add_argument("--no-sequential", action="store_true", help="only the interleaved blocks")
    parser.add_argument(
        "--servers",
        default="granian-asgi,granian-wsgi,gunicorn-uvicorn,gunicorn-gthread",
        help=f"web servers compared on the same app, comma-separated, the first the reference (of "
        f"{', '.join(SERVERS)}); 'none': no comparison",
    )
    parser.add_argument(
        "--servers-backend",
        default="embedded",
        choices=["embedded", "postgres"],
        help="servers: the app's backend (its floor is measured beside them)",
    )
    parser.add_argument("--floor-server", default="granian-asgi", help="servers: the server of the floor")
    parser.add_argument(
        "--rounds", type=int, default=5, help="servers: rounds (one block per server and client count)"
    )
    parser.add_argument("--servers-clients", default="16,64", help="servers: client counts")
    parser.add_argument(
        "--pair-math",
        action="store_true",
        help="print the summary (pair_summary) of the blocks read as JSON from stdin, and the "
        "order of --pairs pairs (schedule), as JSON; runs nothing",
    )
    args = parser.parse_args()
    asked = [args.floor_server] + ([] if args.servers == "none" else args.servers.split(","))
    unknown = [server for server in asked if server not in SERVERS]
    if unknown:
        parser.error(f"unknown web server {', '.join(unknown)}: one of {', '.join(SERVERS)}")
    if args.pair_math:
        blocks = json.load(sys.stdin)
        print(
            json.dumps(
                {"summary": pair_summary(blocks), "cpu": cpu_share(blocks), "schedule": schedule(args.pairs)}
            )
        )
        return
    VAR.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        write_doc(section(results, chart(results, DOCS / "benchmarks-load.png")), Path(args.doc))
        return
    clients = [int(c) for c in args.clients.split(",")]
    names = args.stacks.split(",")
    if args.interleave == "none":
        pairs = []
    elif args.interleave:
        pairs = [tuple(pair.split(":")) for pair in args.interleave.split(",")]
    else:
        pairs = [
            (product, floor) for product, floor in INTERLEAVE.items() if product in names and floor in names
        ]
    results = {
        "machine": machine(),
        "workers": args.workers,
        "threads": args.threads,
        "phase": args.phase,
        "stacks": {},
        "interleaved": {},
    }
    started = time.time()
    for name in [] if args.no_sequential else names:
        stack = STACKS[name](args.workers, args.threads)
        results["stacks"][name] = run_stack(stack, clients, args.phase)
        if stack.inproc:
            results["stacks"][name]["inproc"] = in_process(stack, results["stacks"][name]["memory"])
    for product_name, floor_name in pairs:
        if product_name == floor_name and STACKS[product_name].product:
            raise SystemExit(
                f"--interleave {product_name}:{floor_name}: a product stack cannot run twice at once"
            )
        floor = STACKS[floor_name](args.workers, args.threads)
        product = STACKS[product_name](
            args.workers, args.threads, slot=f"{product_name}-b" if product_name == floor_name else ""
        )
        if product_name == floor_name:
            product.label += " (a second instance)"
        results["interleaved"][product.slot] = run_interleaved(
            product, floor, args.interleave_clients, args.pairs, args.block or args.phase, args.warm
        )
    if args.servers != "none":
        results["servers"] = run_servers(
            args.servers_backend,
            args.servers.split(","),
            args.floor_server,
            [int(c) for c in args.servers_clients.split(",")],
            args.rounds,
            args.block or args.phase,
            args.warm,
            args.workers,
            args.threads,
        )
        (VAR / "servers.json").write_text(json.dumps(results["servers"], indent=1))
    results["seconds"] = time.time() - started
    (VAR / "results.json").write_text(json.dumps(results, indent=1))
    log(f"done in {results['seconds']:.0f} s")
    charted = chart(results, DOCS / "benchmarks-load.png") if not args.no_doc else False
    text = section(results, charted)
    print(text)
    if not args.no_doc:
        write_doc(text, Path(args.doc))


if __name__ == "__main__":
    main()
