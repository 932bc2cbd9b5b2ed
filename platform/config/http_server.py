"""Request bodies the way the site's two HTTP servers need them.

A body sent with ``Transfer-Encoding: chunked`` has no Content-Length, and Django reads exactly
Content-Length bytes, so without help it sees an empty body. gunicorn (production) removes the
chunk framing itself; ``read_unsized_bodies`` then reads the body, at most
``DATA_UPLOAD_MAX_MEMORY_SIZE`` + 1 bytes of it, and hands it to Django with its length (one byte
over the limit is enough for Django, and the API's 413, to refuse it).

The embedded default's server (Django's development server, run by ``manage.py demo``) removes no
framing, and after a response it reads whatever body the application left unread so that the
connection can carry the next request: all of it, however large the client said it was.
``EmbeddedWSGIServer`` decodes chunked bodies, and after a request whose body is over the limit or
chunked it answers ``Connection: close`` and reads at most ``LINGER_MAX_BYTES`` more (so that the
client receives the answer rather than a reset) before closing. ``config/gunicorn.py`` makes gunicorn
close those connections too.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref import simple_server

from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers import basehttp

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

LINGER_MAX_BYTES = 8 * 1024 * 1024
LINGER_SECONDS = 2.0
_MAX_CHUNK_LINE = 4096


def body_limit() -> int | None:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return None if limit is None else int(limit)


def is_chunked(environ: dict[str, Any]) -> bool:
    return "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower()


def declared_length(environ: dict[str, Any]) -> int:
    try:
        return int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def closes_connection(environ: dict[str, Any]) -> bool:
    """A request after which the connection is closed: its body is chunked or declared too large."""
    limit = body_limit()
    return is_chunked(environ) or (limit is not None and declared_length(environ) > limit)


def read_bounded(stream: Any, limit: int | None) -> bytes:
    """Read a stream to its end, but never more than ``limit`` + 1 bytes."""
    parts: list[bytes] = []
    size = 0
    while limit is None or size <= limit:
        data = stream.read(65536 if limit is None else min(65536, limit + 1 - size))
        if not data:
            break
        parts.append(data)
        size += len(data)
    return b"".join(parts)


def read_unsized_bodies(app: WSGIApp) -> WSGIApp:
    """WSGI middleware: give a body that came without a Content-Length (chunked) its length."""

    def application(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if is_chunked(environ) and not environ.get("CONTENT_LENGTH"):
            body = read_bounded(environ["wsgi.input"], body_limit())
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return app(environ, start_response)

    return application


class MalformedBody(ValueError):
    pass


class ChunkedReader(io.RawIOBase):
    """The decoded bytes of a chunked message body (RFC 9112 section 7.1), read off the connection."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self._raw = raw
        self._left = 0  # bytes left in the current chunk
        self._done = False

    def readable(self) -> bool:
        return True

    def _line(self) -> bytes:
        line = self._raw.readline(_MAX_CHUNK_LINE + 1)
        if not line.endswith(b"\n") or len(line) > _MAX_CHUNK_LINE:
            raise MalformedBody("a chunk-size line is missing or too long")
        return line.rstrip(b"\r\n")

    def _next_chunk(self) -> None:
        size = self._line().split(b";", 1)[0].strip()
        try:
            self._left = int(size, 16)
        except ValueError as exc:
            raise MalformedBody(f"{size[:20]!r} is not a chunk size") from exc
        if self._left < 0:
            raise MalformedBody("negative chunk size")
        if self._left == 0:
            while self._line():  # trailer fields, up to the empty line
                pass
            self._done = True

    def read(self, size: int = -1) -> bytes:
        parts: list[bytes] = []
        wanted = size if size is not None and size >= 0 else None
        while not self._done and (wanted is None or wanted > 0):
            if self._left == 0:
                self._next_chunk()
                continue
            take = self._left if wanted is None else min(self._left, wanted)
            data = self._raw.read(take)
            if not data:
                raise MalformedBody("the connection ended inside a chunk")
            parts.append(data)
            self._left -= len(data)
            if wanted is not None:
                wanted -= len(data)
            if self._left == 0 and self._raw.read(2) != b"\r\n":
                raise MalformedBody("a chunk does not end with CRLF")
        return b"".join(parts)


class _ServerHandler(basehttp.ServerHandler):
    # Set by wsgiref's handler and by _RequestHandler, which the stubs do not know of.
    headers: Any
    request_handler: Any

    def __init__(self, stdin: Any, stdout: Any, stderr: Any, environ: dict[str, Any], **kwargs: Any) -> None:
        self.closing = closes_connection(environ)
        self.leftover: Any = None
        if is_chunked(environ):
            if environ.get("CONTENT_LENGTH") or str(environ["HTTP_TRANSFER_ENCODING"]).strip().lower() != "chunked":
                # Two framings, or a coding besides chunked: where the body ends is ambiguous.
                raise MalformedBody("use either Content-Length or Transfer-Encoding: chunked alone")
            self.leftover = ChunkedReader(stdin)
            body = read_bounded(self.leftover, body_limit())
            environ["CONTENT_LENGTH"] = str(len(body))
            stdin = io.BytesIO(body)
        super().__init__(stdin, stdout, stderr, environ, **kwargs)
        if self.leftover is None:
            self.leftover = self.get_stdin()

    def cleanup_headers(self) -> None:
        super().cleanup_headers()
        if self.closing:
            self.headers["Connection"] = "close"
            self.request_handler.close_connection = True

    def close(self) -> None:
        if not self.request_handler.close_connection:
            super().close()  # reads the rest of a body within the limit, so the connection can be reused
            return
        try:
            # Read (and drop) a little of what the client is still sending, so that it gets the
            # answer rather than a reset; a client that sends more only finds the connection closed.
            self.request_handler.connection.settimeout(LINGER_SECONDS)
            read_bounded(self.leftover, LINGER_MAX_BYTES)
        except (OSError, ValueError):
            pass
        simple_server.ServerHandler.close(self)


class _RequestHandler(basehttp.WSGIRequestHandler):
    def handle_one_request(self) -> None:
        # Django's own method, with this module's ServerHandler.
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(414)
            return
        if not self.parse_request():
            return
        try:
            handler = _ServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ())
        except MalformedBody as exc:
            self.close_connection = True
            self.send_error(400, f"Malformed request body: {exc}")
            return
        handler.request_handler = self
        handler.run(self.server.get_app())  # type: ignore[attr-defined]


class EmbeddedWSGIServer(basehttp.WSGIServer):
    """Django's development server with ``_RequestHandler``; threaded when used through ``serve_site``."""

    def __init__(self, server_address: Any, handler_class: Any = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(server_address, _RequestHandler, *args, **kwargs)


def serve_site(host: str, port: int) -> None:
    """Serve the site (static files included) on ``host:port`` until the process ends."""
    handler = StaticFilesHandler(basehttp.get_internal_wsgi_application())
    basehttp.run(host, port, handler, ipv6=":" in host, threading=True, server_cls=EmbeddedWSGIServer)
