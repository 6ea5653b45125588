"""The proxy's outbound connection: an httpx transport through the egress policy, and the cap on
each project's calls in flight.

The async twin of `providers.egress.PinnedTransport`: the host is resolved once at connect time by
`providers.egress.egress_addresses` (the same check, the same allow list), and the TCP
connection goes to one of the checked addresses, while the Host header and TLS server name stay
the URL's hostname. No proxies from the environment, no redirects. One transport (its connection
pool) per event loop (a pool belongs to the loop it was first used on), one SSL context per process.

Calls go to the transport itself (`upstream_send`), not through an httpx.AsyncClient: the client's
layers (auth and redirect flows, event hooks, URL merging, a cookie jar filled from every answer)
did nothing the proxy wants and cost about a fifth of a forwarded call's CPU (docs/tuning/proxy.md);
without the jar, no cookie an upstream sets for one project is sent on another project's call. What
the client added to each request is added here: its headers (`upstream_request`) and the timeouts.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from functools import lru_cache

import httpcore
import httpx
from django.conf import settings

from providers.bounded import ACCEPT_ENCODING
from providers.egress import egress_addresses, egress_allow, is_address

_ssl_context = None
_ssl_lock = threading.Lock()
_transports: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The headers an httpx client sent on every request besides the call's own.
DEFAULT_HEADERS = {
    "Accept": "*/*",
    "Accept-Encoding": ACCEPT_ENCODING,  # what providers.bounded decodes
    "Connection": "keep-alive",
    "User-Agent": f"python-httpx/{httpx.__version__}",
}


class AsyncPinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend with the egress check at the point of connecting."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        # getaddrinfo blocks: resolve in a thread, then connect to what was checked. An address
        # needs no lookup: checked here, without the thread. The allow list is the one the call's
        # view thread read (no database read from here).
        addresses = (
            egress_addresses(host, port, fresh=False)
            if is_address(host)
            else await asyncio.to_thread(egress_addresses, host, port, fresh=False)
        )
        last: Exception | None = None
        for addr in addresses:
            target = addr.ipv4_mapped if addr.version == 6 and addr.ipv4_mapped else addr
            try:
                return await self._backend.connect_tcp(
                    str(target),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last  # egress_addresses never returns an empty list

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
        raise httpcore.ConnectError("unix sockets are not an upstream")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class AsyncPinnedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, *, ssl_context, limits: httpx.Limits):
        super().__init__(verify=ssl_context, limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncPinnedBackend(),
        )


def _ssl():
    global _ssl_context
    if _ssl_context is None:
        with _ssl_lock:
            if _ssl_context is None:  # loading the CA bundle takes tens of ms: once per process
                _ssl_context = httpx.create_ssl_context(verify=True, trust_env=False)
    return _ssl_context


def _transport() -> AsyncPinnedTransport:
    """This event loop's pooled transport; a changed egress allow list (or pool setting) gets a
    fresh pool, so no connection opened under the old policy is reused."""
    loop = asyncio.get_running_loop()
    policy = (egress_allow(fresh=False), settings.THREADLESS_PROXY_MAX_CONNECTIONS)
    held = _transports.get(loop)
    if held is not None and held[0] == policy:
        return held[1]
    size = settings.THREADLESS_PROXY_MAX_CONNECTIONS
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=min(40, size))
    transport = AsyncPinnedTransport(ssl_context=_ssl(), limits=limits)
    _transports[loop] = (policy, transport)
    return transport


@lru_cache(maxsize=256)
def _url(url: str) -> httpx.URL:
    return httpx.URL(url)  # parsed once per upstream URL (httpx.URL is immutable)


def upstream_request(url: str, *, content: bytes, headers: dict) -> httpx.Request:
    """A POST to `url` with the default headers under the call's own, and the timeouts: 600 s to
    read (a model may think for minutes), 10 s to connect, and at most
    THREADLESS_PROXY_POOL_TIMEOUT for a free connection (httpx.PoolTimeout), so a full pool
    answers quickly instead of holding every tenant's call for minutes."""
    timeout = {"connect": 10.0, "read": 600.0, "write": 600.0, "pool": settings.THREADLESS_PROXY_POOL_TIMEOUT}
    return httpx.Request(
        "POST",
        _url(url),
        content=content,
        headers={**DEFAULT_HEADERS, **headers},
        extensions={"timeout": timeout},
    )


async def upstream_send(request: httpx.Request) -> httpx.Response:
    """Send `request` on this loop's pinned transport; the answer's body is not read yet (read it
    through providers.bounded, then `aclose()` it). No redirect is followed and no cookie kept."""
    response = await _transport().handle_async_request(request)
    response.request = request
    return response


# --- calls in flight per project ------------------------------------------------------------------

_in_flight: dict[str, int] = {}
_in_flight_lock = threading.Lock()


class ProjectSlot:
    """One of a project's proxy calls in flight in this process; `release()` is idempotent, so
    every way a call can end (the answer sent, the stream closed, the client gone) may call it."""

    def __init__(self, project_id: str):
        self.project_id = project_id
        self._held = True

    def release(self) -> None:
        with _in_flight_lock:
            if not self._held:
                return
            self._held = False
            left = _in_flight.get(self.project_id, 1) - 1
            if left > 0:
                _in_flight[self.project_id] = left
            else:
                _in_flight.pop(self.project_id, None)


def project_slot_take(project_id: str) -> ProjectSlot | None:
    """A slot for one more call of this project, or None when it already has
    THREADLESS_PROXY_PROJECT_CONCURRENCY calls open in this process (0 = no cap). Never waits:
    one tenant holding many slow streams cannot make another tenant's call queue behind them."""
    cap = settings.THREADLESS_PROXY_PROJECT_CONCURRENCY
    with _in_flight_lock:
        open_calls = _in_flight.get(project_id, 0)
        if cap > 0 and open_calls >= cap:
            return None
        _in_flight[project_id] = open_calls + 1
    return ProjectSlot(project_id)


def project_calls_open(project_id: str) -> int:
    with _in_flight_lock:
        return _in_flight.get(project_id, 0)
