"""Egress policy for outbound calls (http_call URLs and llm `baseUrl`).

Private, loopback, link-local, reserved and multicast addresses are refused unless the host or
a CIDR containing the address is listed in THREADLESS_EGRESS_ALLOW. Checked right before each
call (after DNS resolution), so a config cannot reach the server's own network by a name.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class EgressRefused(Exception):
    pass


def host_port(url: str) -> str:
    """`host[:port]` as written in the URL (the digest's name for the target)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host


def _allowed(host: str, addresses: list[ipaddress._BaseAddress]) -> bool:
    allow = [a.strip() for a in settings.THREADLESS_EGRESS_ALLOW if a.strip()]
    if host.lower() in {a.lower() for a in allow}:
        return True
    networks = []
    for item in allow:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            continue
    return all(any(addr in net for net in networks) for addr in addresses)


def _is_internal(addr: ipaddress._BaseAddress) -> bool:
    return (addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_reserved
            or addr.is_multicast or addr.is_unspecified)


def egress_check(url: str) -> None:
    """Raise EgressRefused when `url`'s host resolves to an internal address that is not allowed."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EgressRefused("only http:// and https:// URLs are allowed")
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                       proto=socket.IPPROTO_TCP)
        except socket.gaierror:
            raise EgressRefused(f"host {host} could not be resolved") from None
        addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    internal = [a for a in addresses if _is_internal(a)]
    if internal and not _allowed(host, internal):
        raise EgressRefused(f"egress to {host} is not allowed (private or loopback address; "
                            "list it in THREADLESS_EGRESS_ALLOW)")
