"""Egress policy for outbound calls (http_call URLs, llm `baseUrl`, background models), and
where the server's own provider keys may be sent.

Addresses: a host is resolved **once**, at connect time, by `resolve`; every address it resolves
to must be global (`ipaddress` `is_global`, judged again on the IPv4 address inside IPv4-mapped,
IPv4-compatible, 6to4, Teredo and NAT64 forms; 100.64.0.0/10 and multicast refused) unless the
host, or a CIDR holding the address, is on the allow list: THREADLESS_EGRESS_ALLOW from the
environment plus the operator's runtime list (`EgressAllowEntry`, the console's Egress page),
which every process reads again at most RUNTIME_LIST_SECONDS after a change. The connection is
then made to one of the checked addresses, never to a second lookup's answer, while the Host
header and the TLS server name (SNI and certificate check) stay the URL's hostname. Every
outbound call uses `egress_client()` (its `PinnedTransport`), so a name that resolves to a
public address for the check and to 127.0.0.1 afterwards (DNS rebinding) cannot reach loopback.
A refusal says to the caller which value would allow the host (`EgressRefused`), never why.

Provider keys: THREADLESS_PROVIDER_ENV_ALLOW lists `NAME` or `NAME@host[:port][/path]` entries. A
bare `NAME` may be sent only to its provider's official host over https, for calls under `/v1`
(openai → api.openai.com, anthropic → api.anthropic.com; OPENAI_API_KEY / ANTHROPIC_API_KEY
belong to their vendor, any other name to the task's provider); `NAME@host[:port][/path]` adds
that destination (any port when none is given; calls under the path when one is given, under
/v1 for an official host named without one); entries for one name add up. The path checked is
the call's: the base URL's path plus what the provider appends (`CALL_PATHS`); a base URL with
user info, a query or a fragment (`base_url_refusal`) gets no key at all. `provider_env_refusal` says why a
key may not go to a `baseUrl` (config validation and the call-time key lookup both ask it).

One module for both halves: every caller that asks whether a key may go to a base URL asks in the
same breath whether that URL may be reached at all (`chat.config`, `proxy.services`, the
background-model command), the key rules start from the address rules' `base_url_refusal`, and
the docs (security.md, deployment.md) point to this file as the one egress policy to audit.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import re
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx
from django.apps import apps
from django.conf import settings

log = logging.getLogger("threadless.egress")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

OFFICIAL_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}
# The provider a well-known variable belongs to: its bare entry means that provider's host only
# (the OpenAI key never goes to Anthropic). Other bare names follow the task's provider.
NAME_PROVIDERS = {"OPENAI_API_KEY": "openai", "ANTHROPIC_API_KEY": "anthropic"}

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215 local-use: never global
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")  # one DNS label (RFC 1123, plus _)


class EgressRefused(Exception):
    """An outbound call the policy refuses. `str()` is what a caller may see, the same text for
    every reason (so a refusal does not tell whether an internal name resolves, or to what);
    `detail` says why, for the staff log and the staff-only raw error."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


def _refused(host: str, detail: str) -> EgressRefused:
    # The same text whatever the reason (it must not tell whether a name resolves, or to what),
    # naming the allow-list value an operator would add: the host as the URL names it.
    return EgressRefused(
        f"egress to {host} is not allowed; to allow it, an operator adds {host} to "
        "THREADLESS_EGRESS_ALLOW (or on the console's Egress page)",
        detail,
    )


def host_port(url: str) -> str:
    """`host[:port]` as written in the URL (the digest's name for the target)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host


# --- addresses --------------------------------------------------------------------------------


def embedded_ipv4(addr: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, compatible, 6to4, Teredo, NAT64)."""
    if addr.version == 4:
        return []
    found: list[ipaddress.IPv4Address] = []
    if addr.ipv4_mapped is not None:
        found.append(addr.ipv4_mapped)
    if addr.sixtofour is not None:
        found.append(addr.sixtofour)
    if addr.teredo is not None:
        found.extend(addr.teredo)
    if addr in _NAT64 or (addr in _IPV4_COMPATIBLE and int(addr) > 1):
        found.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    return found


def _global(addr: Address) -> bool:
    # fec0::/10 (site-local, deprecated by RFC 3879) is still routed inside some networks, and
    # `ipaddress` counts it as global.
    return (
        addr.is_global
        and not addr.is_multicast
        and not addr.is_reserved
        and not addr.is_loopback
        and not addr.is_link_local
        and not addr.is_unspecified
        and not (addr.version == 6 and addr.is_site_local)
    )


def address_is_public(addr: Address) -> bool:
    """True when the address and every IPv4 address inside it are globally routable."""
    if addr.version == 6 and addr.ipv4_mapped is not None:
        return _global(addr.ipv4_mapped)  # the kernel connects to the IPv4 address itself
    if addr.version == 6 and addr in _NAT64_LOCAL:
        return False
    if addr.version == 6 and addr in _NAT64:  # well-known NAT64 prefix: judged by the IPv4 inside
        return _global(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    return _global(addr) and all(_global(inner) for inner in embedded_ipv4(addr))


# --- the allow list -----------------------------------------------------------------------------

RUNTIME_LIST_SECONDS = 5.0  # how long a process uses the runtime list it read (and a verdict)


@dataclass
class _Runtime:
    values: tuple[str, ...] = ()
    expires: float = 0.0


_runtime = _Runtime()
# (host, port, allow list) → (expires, refusal text and detail, or None): see `egress_check_recent`.
_verdicts: dict[tuple, tuple[float, tuple[str, str] | None]] = {}
_VERDICTS_MAX = 1024


def egress_caches_forget() -> None:
    """Read the runtime list (and check hosts) again on next use: after this process changed it."""
    _runtime.expires = 0.0
    _verdicts.clear()


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _runtime_values(fresh: bool) -> tuple[str, ...]:
    if time.monotonic() < _runtime.expires or not fresh or _on_event_loop():
        # On an event loop the database may not be read: the list its call's view thread read is used.
        return _runtime.values
    try:
        # (by name: `providers` is imported while the app registry loads, before models may be)
        entries = apps.get_model("providers", "EgressAllowEntry").objects
        values = tuple(entries.values_list("value", flat=True))
    except Exception as exc:  # noqa: BLE001 - the last list read stays in force until the database answers
        log.warning("egress: the runtime allow list could not be read (%s)", exc.__class__.__name__)
        values = _runtime.values
    _runtime.values, _runtime.expires = values, time.monotonic() + RUNTIME_LIST_SECONDS
    return values


def egress_allow(*, fresh: bool = True) -> tuple[str, ...]:
    """The allow list in force: THREADLESS_EGRESS_ALLOW, then the operator's runtime entries.

    The runtime part is one small query at most every RUNTIME_LIST_SECONDS per process (never on
    an event loop, and not with `fresh=False`: then the list last read is used)."""
    return tuple(settings.THREADLESS_EGRESS_ALLOW) + _runtime_values(fresh)


def allow_entry_refusal(value: str) -> str | None:
    """Why `value` cannot be an allow-list entry (a host name, an IP address or a CIDR), or None."""
    value = value.strip()
    try:
        network = ipaddress.ip_network(value.strip("[]"), strict=False)
    except ValueError:
        network = None
    if network is not None:
        return (
            "would allow every address; name the hosts or networks to reach."
            if network.prefixlen == 0
            else None
        )
    labels = value.lower().rstrip(".").split(".")
    if not value or len(value) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return "must be a host name (llm.internal), an IP address (10.0.0.5) or a CIDR (10.0.0.0/8)."
    return None


def _allow_list(fresh: bool = True) -> tuple[set[str], list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    names, networks = set(), []
    for item in egress_allow(fresh=fresh):
        item = item.strip()
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item.strip("[]"), strict=False))
        except ValueError:
            names.add(item.lower().rstrip("."))
    return names, networks


def _allowed(addr: Address, networks) -> bool:
    forms = [addr] + ([addr.ipv4_mapped] if addr.version == 6 and addr.ipv4_mapped else [])
    return any(form in net for form in forms for net in networks if form.version == net.version)


def resolve(host: str, port: int) -> list[str]:
    """The one DNS lookup of an outbound connection: the host's addresses, in resolver order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%")[0]
        if address not in seen:
            seen.append(address)
    return seen


def egress_addresses(host: str, port: int, *, fresh: bool = True) -> list[Address]:
    """Resolve `host` once and check every address; the checked addresses to connect to.

    Raises EgressRefused when the host cannot be resolved or any address is not global and not
    on the allow list (`egress_allow`; `fresh=False` off the database, as on an event loop).
    """
    host = host.strip("[]")
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            addresses = [ipaddress.ip_address(a) for a in resolve(host, port)]
        except (OSError, UnicodeError, ValueError):
            raise _refused(host, f"host {host} could not be resolved") from None
        if not addresses:
            raise _refused(host, f"host {host} could not be resolved")
    names, networks = _allow_list(fresh)
    if host.lower().rstrip(".") in names:
        return addresses
    for addr in addresses:
        if not address_is_public(addr) and not _allowed(addr, networks):
            raise _refused(
                host,
                f"egress to {host} is not allowed ({addr} is not a public address; "
                "list it in THREADLESS_EGRESS_ALLOW)",
            )
    return addresses


def url_check(url: str) -> None:
    """The part of the policy that needs no DNS: an http(s) URL with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EgressRefused("only http:// and https:// URLs are allowed")


def base_url_refusal(url: str) -> str | None:
    """Why `url` cannot be a provider base URL (a path is appended to it), or None.

    Only `http(s)://host[:port][/path]`: no user info (credentials belong in a key, and
    `https://api.openai.com@evil` names the host evil), no query and no fragment (a `?` or `#`
    would turn the appended `/chat/completions` into a parameter, so the call reaches whatever
    path the base URL names), no `.`/`..` segments, backslashes or percent-escapes in the path
    (which could climb out of a pinned path prefix once normalised), no whitespace.
    """
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "must be an http:// or https:// URL without spaces or control characters."
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL."
    if "@" in parts.netloc:
        return "must not contain user info (user:password@); send the key as the upstream key."
    if "?" in url or "#" in url:
        return "must not contain a query (?) or a fragment (#): the provider's path is appended to it."
    try:
        _ = parts.port
    except ValueError:
        return "has an invalid port."
    if "\\" in parts.path or "%" in parts.path or any(seg in (".", "..") for seg in parts.path.split("/")):
        return "must not contain '.' or '..' segments, backslashes or percent-escapes in its path."
    return None


def egress_check(url: str) -> list[Address]:
    """Check `url` now (resolving its host); the addresses it may reach. Raises EgressRefused.

    Outbound calls need not call this: `egress_client()` makes the same check at connect time
    and connects to what it checked.
    """
    url_check(url)
    parts = urlsplit(url)
    return egress_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


def is_address(host: str) -> bool:
    """True when `host` is an IP address (an IPv6 one with or without brackets), not a name."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


# The hint beside a saved URL that `egress_refusal` refuses (a proxy upstream, a webhook endpoint).
EGRESS_HINT = "Use a public upstream, or ask the server's operator to allow this one."


def egress_refusal(url: str) -> str | None:
    """What a call to `url` would be refused with (the caller's text, with the value that would
    allow it), or None: for checking a URL when it is saved.

    Only a host whose answer needs no DNS is judged here: an IP address, `localhost` and names
    under `.localhost` (loopback by RFC 6761). A name is judged when it is called: answering a
    save by what an internal name resolves to would tell a tenant which names exist inside the
    operator's network, which the refusal text itself never does."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    if not (is_address(host) or host == "localhost" or host.endswith(".localhost")):
        return None
    try:
        egress_check(url)
    except EgressRefused as exc:
        return str(exc)
    except ValueError:  # urlsplit's port
        return "has an invalid port."
    return None


def egress_check_recent(url: str) -> None:
    """`egress_check` for a call about to be made, its verdict per host and allow list kept for
    RUNTIME_LIST_SECONDS (a DNS lookup per proxied call would cost more than the call's own work).

    Only a forecast, so that a refused call is answered before anything is stored: the connection
    is still checked when it is made. Raises EgressRefused."""
    url_check(url)
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    key = (host, port, egress_allow())
    now = time.monotonic()
    hit = _verdicts.get(key)
    if hit is None or hit[0] <= now:
        try:
            egress_addresses(host, port)
            verdict = None
        except EgressRefused as exc:
            verdict = (str(exc), exc.detail)
        if len(_verdicts) >= _VERDICTS_MAX:
            _verdicts.clear()
        hit = _verdicts[key] = (now + RUNTIME_LIST_SECONDS, verdict)
    if hit[1] is not None:
        raise EgressRefused(*hit[1])


# --- the pinned connection --------------------------------------------------------------------


def open_stream(
    address: str, port: int, *, timeout: float | None, local_address: str | None, socket_options
) -> httpcore.NetworkStream:
    """A TCP connection to one checked IP address (TLS, if any, is started by httpcore after)."""
    return httpcore.SyncBackend().connect_tcp(
        address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
    )


class PinnedBackend(httpcore.SyncBackend):
    """httpcore's network backend with the egress check at the point of connecting.

    httpcore passes the URL's hostname here and, for https, starts TLS afterwards with that
    same hostname as `server_hostname`, so SNI and certificate verification are unaffected by
    connecting to an IP address.
    """

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        last: Exception | None = None
        for addr in egress_addresses(host, port):
            target = addr.ipv4_mapped if addr.version == 6 and addr.ipv4_mapped else addr
            try:
                return open_stream(
                    str(target),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last  # egress_addresses never returns an empty list


class PinnedTransport(httpx.HTTPTransport):
    """An httpx transport whose connections go through `PinnedBackend`. No proxies: a proxy
    would resolve the host itself, past the check."""

    def __init__(self, *, verify: bool | str | object = True, limits: httpx.Limits = httpx.Limits()):
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        super().__init__(verify=ssl_context, limits=limits, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedBackend(),
        )


def egress_client(*, verify: bool | str | object = True, limits: httpx.Limits | None = None) -> httpx.Client:
    """An httpx client for outbound calls: pinned connections, no redirects, no env proxies."""
    limits = limits or httpx.Limits(max_connections=200, max_keepalive_connections=40)
    return httpx.Client(
        transport=PinnedTransport(verify=verify, limits=limits), follow_redirects=False, trust_env=False
    )


# --- where provider keys from the environment may go ------------------------------------------

# The path every call of a provider starts with, below its base URL (the llm task, the proxy and
# the embeddings client append these or, for OpenAI, `/embeddings` beside `/chat/completions`).
CALL_PATHS = {"openai": "/chat/completions", "anthropic": "/v1/messages"}
OFFICIAL_PREFIX = "/v1"  # the official hosts' API lives under /v1


@dataclass(frozen=True)
class KeyTarget:
    """Where an environment key may go: `host` ("" = the provider's official host, https only),
    `port` (None = any) and a path `prefix` every call's path must sit under ("" = any path)."""

    host: str
    port: int | None
    prefix: str


_OFFICIAL = KeyTarget("", None, OFFICIAL_PREFIX)  # a bare NAME entry


def _normal_host(host: str) -> str:
    host = host.strip().strip("[]").lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def _prefix(path: str) -> str | None:
    """`/v1/` → `/v1`; None when the path is not plain segments."""
    path = path.rstrip("/")
    if not path:
        return ""
    segments = path.split("/")[1:]
    if not path.startswith("/") or any(
        not seg or seg in (".", "..") or any(c in seg for c in "%\\?#@ ") for seg in segments
    ):
        return None
    return path


def _target(where: str) -> KeyTarget | None:
    """`host[:port][/prefix]` (`[v6]` for an IPv6 literal) → a KeyTarget; None when malformed. An
    official host named without a path gets the official prefix (/v1); another host, any path."""
    where = where.strip()
    slash = where.find("/", where.find("]") + 1 if where.startswith("[") else 0)
    where, path = (where[:slash], where[slash:]) if slash >= 0 else (where, None)
    port: str | None = None
    if where.startswith("["):
        host, _, rest = where[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                return None
            port = rest[1:]
    elif where.count(":") == 1:
        host, port = where.split(":")
    else:
        host = where
    host = _normal_host(host)
    if not host or any(c in host for c in "/@?# "):
        return None
    if path is None:
        prefix = OFFICIAL_PREFIX if host in OFFICIAL_HOSTS.values() else ""
    else:
        prefix = _prefix(path)
        if prefix is None:
            return None
    if port is None:
        return KeyTarget(host, None, prefix)
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return KeyTarget(host, int(port), prefix)


def provider_env_rules() -> dict[str, list[KeyTarget]]:
    """THREADLESS_PROVIDER_ENV_ALLOW parsed: variable name → where it may be sent.

    A malformed `NAME@…` entry adds no destination (the key goes nowhere it would not have).
    """
    rules: dict[str, list[KeyTarget]] = {}
    for entry in settings.THREADLESS_PROVIDER_ENV_ALLOW:
        name, at, where = entry.strip().partition("@")
        name = name.strip()
        if not name:
            continue
        targets = rules.setdefault(name, [])
        target = _target(where) if at else _OFFICIAL
        if target is not None and target not in targets:
            targets.append(target)
    return rules


def provider_env_names() -> list[str]:
    return list(provider_env_rules())


def _destination(provider: str, base_url: str | None) -> tuple[str, str, int, str]:
    """(scheme, host, port, path of a call) for a provider's base URL."""
    if not base_url:
        return "https", OFFICIAL_HOSTS.get(provider, ""), 443, OFFICIAL_PREFIX + CALL_PATHS.get(provider, "")
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = -1
    return (
        parts.scheme,
        _normal_host(parts.hostname or ""),
        port,
        parts.path.rstrip("/") + CALL_PATHS.get(provider, ""),
    )


def _under(path: str, prefix: str) -> bool:
    return not prefix or path == prefix or path.startswith(prefix + "/")


def _shown(target: KeyTarget, official: str | None) -> str | None:
    under = f" under {target.prefix}" if target.prefix else ""
    if target.host == "":
        return f"{official} (https only){under}" if official else None
    host = f"[{target.host}]" if ":" in target.host else target.host
    return host + (f":{target.port}" if target.port else "") + under


def provider_env_refusal(name: str, *, provider: str, base_url: str | None) -> str | None:
    """Why the key in environment variable `name` may not be sent to `base_url`, or None.

    `base_url` None means the provider's default (its official host). The key goes only to a
    base URL without user info, query or fragment whose host, port and path prefix an entry
    names. The demo provider sends nothing anywhere.
    """
    rules = provider_env_rules()
    if name not in rules:
        allowed = ", ".join(rules) or "none"
        return f"'{name}' is not in THREADLESS_PROVIDER_ENV_ALLOW (allowed: {allowed})."
    if provider == "demo":
        return None
    if base_url and base_url_refusal(base_url):
        return f"the key in {name} is only sent to a plain base URL: {base_url_refusal(base_url)}"
    scheme, host, port, path = _destination(provider, base_url)
    official = OFFICIAL_HOSTS.get(NAME_PROVIDERS.get(name, provider))
    for target in rules[name]:
        if target.host == "":
            if (
                official
                and host == official
                and scheme == "https"
                and port == 443
                and _under(path, target.prefix)
            ):
                return None
        elif (
            host == target.host
            and (target.port is None or target.port == port)
            and _under(path, target.prefix)
        ):
            return None
    where = (
        ", ".join(p for p in (_shown(t, official) for t in rules[name]) if p) or "nowhere for this provider"
    )
    shown_host = f"[{host}]" if ":" in host else host
    return (
        f"the key in {name} may only be sent to {where}, not to {shown_host or '(no host)'}:{port}{path} "
        f"(the operator adds a destination with {name}@host[:port][/path] in THREADLESS_PROVIDER_ENV_ALLOW; "
        "or use apiKeySecret)."
    )


def env_api_key(task: dict) -> str | None:
    """The server's own key for an llm task's `apiKeyEnv`, or None when the task names none.

    A key from the environment is the operator's: it is returned only when the task's `baseUrl`
    is a destination THREADLESS_PROVIDER_ENV_ALLOW names for it. Raises LookupError (with a
    reason fit for a digest) when the variable is not allowed, not for this host, or not set.
    """
    name = task.get("apiKeyEnv")
    if not name:
        return None
    if name not in provider_env_names():
        raise LookupError(f"apiKeyEnv '{name}' is not allowed on this server")
    # Checked again at call time: a config saved before the rule, or written past validation,
    # must not send the server's own key to a host the operator did not name.
    refusal = provider_env_refusal(name, provider=task.get("provider") or "", base_url=task.get("baseUrl"))
    if refusal:
        raise LookupError(refusal.rstrip("."))
    value = os.environ.get(name, "")
    if not value:
        raise LookupError(f"the environment variable {name} is not set on the server")
    return value
