"""Which endpoint URLs the platform will call: https on public addresses only.

The platform POSTs wherever a team points it, so an endpoint must not be a way to reach the
platform's own network (the database, the cache, a cloud metadata service). With
HINDSIGHT_DELIVERY_ALLOW_LOOPBACK (development and tests) plain http and loopback hosts are also
allowed, never other private addresses.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address_problem(address: IPAddress, *, allow_loopback: bool) -> str | None:
    if address.is_loopback:
        return None if allow_loopback else f"{address} is a loopback address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def endpoint_url_check(url: str, *, allow_loopback: bool) -> str:
    """The URL, stripped, if acceptable; ValidationError({"url": ...}) naming the problem otherwise."""
    url = (url or "").strip()
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()

    def refuse(message: str) -> ValidationError:
        return ValidationError({"url": message})

    if parts.scheme not in ("https", "http") or not host:
        raise refuse("Enter the full address of your endpoint, e.g. https://agent.example.org/hindsight.")
    if parts.username or parts.password:
        raise refuse("Put no credentials in the URL: the platform signs every request with your endpoint secret.")
    if parts.fragment:
        raise refuse("Remove the #fragment: it is never sent to a server.")
    try:
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError as exc:
        raise refuse(f"The port is not valid: {exc}.") from exc
    loopback_host = host in _LOOPBACK_NAMES
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        problem = _address_problem(literal, allow_loopback=allow_loopback)
        if problem:
            raise refuse(f"The platform calls only public addresses: {problem}.")
        loopback_host = literal.is_loopback
    elif loopback_host and not allow_loopback:
        raise refuse(f"The platform calls only public addresses: {host} is this machine.")
    if parts.scheme != "https" and not (allow_loopback and loopback_host):
        raise refuse("The endpoint must use https:// (plain http is allowed only for loopback in development).")
    return url


class AddressRefused(Exception):
    """The endpoint may not be called now; the message names why."""


def endpoint_addresses_vetted(url: str, *, allow_loopback: bool) -> tuple[str, ...]:
    """Resolve the URL's host once, just before a call: the addresses the call may connect to.

    The registration check sees only the name; a name can point at a private address later. Every
    address of the answer must be acceptable, and the call connects to these addresses and no
    others (``endpoints.pinning``): resolving the name again would let a name server answer a
    public address here and a private one to the connection (DNS rebinding).
    Raises AddressRefused naming the problem.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise AddressRefused(f"cannot resolve {host}: {exc}") from exc
    addresses: list[str] = []
    for info in infos:
        raw = str(info[4][0])
        address = ipaddress.ip_address(raw.split("%")[0])  # drop an IPv6 zone
        problem = _address_problem(address, allow_loopback=allow_loopback)
        if problem:
            raise AddressRefused(f"{host} resolves to {problem}; the platform calls only public addresses")
        if raw not in addresses:
            addresses.append(raw)
    if not addresses:
        raise AddressRefused(f"cannot resolve {host}: no address")
    return tuple(addresses)
