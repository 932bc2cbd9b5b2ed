"""An httpx transport that connects only to addresses vetted beforehand, never resolving the name again.

Vetting a name's addresses and then letting httpx resolve the name afresh when it connects leaves a
gap: a hostile name server can answer a public address to the check and, with a zero TTL, a private
one (127.0.0.1, 10.x, 169.254.169.254) to the connection — DNS rebinding. Here the TCP connection
goes to the vetted addresses themselves while the URL keeps the name, so the Host header, the TLS
server name (SNI) and the certificate's hostname check are the name's, exactly as without pinning.

httpx 0.28 takes no network backend, so the transport's pool (``_pool``, the one private name used
here; httpx and httpcore are pinned, and tests/endpoints/test_dns_rebinding.py fails if it stops
taking effect) is replaced by httpcore's public ``ConnectionPool(network_backend=...)``. The rest is
httpx's own transport: its exception mapping and response streaming.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpcore
import httpx


class _PinnedBackend(httpcore.SyncBackend):
    """Connects ``host`` to its vetted addresses, in the resolver's order; refuses any other host."""

    def __init__(self, *, host: str, addresses: tuple[str, ...]) -> None:
        self._host = host.lower()
        self._addresses = addresses

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if host.lower() != self._host:
            raise httpcore.ConnectError(f"{host} is not the vetted host {self._host}")
        failures: list[str] = []
        timed_out = True
        for address in self._addresses:
            try:
                return super().connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectTimeout as exc:
                failures.append(f"{address}: {exc or 'timed out'}")
            except httpcore.ConnectError as exc:
                failures.append(f"{address}: {exc}")
                timed_out = False
        message = f"cannot connect to {host} port {port} ({'; '.join(failures) or 'no vetted address'})"
        raise httpcore.ConnectTimeout(message) if timed_out and failures else httpcore.ConnectError(message)


class PinnedTransport(httpx.HTTPTransport):
    """httpx's transport for one host, connecting only to ``addresses`` (IP literals) for it."""

    def __init__(self, *, host: str, addresses: tuple[str, ...]) -> None:
        ssl_context = httpx.create_ssl_context()  # verifies as httpx does (SSL_CERT_FILE, else certifi)
        super().__init__(verify=ssl_context)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, network_backend=_PinnedBackend(host=host, addresses=addresses)
        )


def pinned_client(*, url: str, addresses: tuple[str, ...], timeout: httpx.Timeout) -> httpx.Client:
    """A client for calls to ``url``'s origin that connects only to ``addresses``; redirects are not followed."""
    host = httpx.URL(url).raw_host.decode("ascii")
    return httpx.Client(
        transport=PinnedTransport(host=host, addresses=addresses), timeout=timeout, follow_redirects=False
    )
