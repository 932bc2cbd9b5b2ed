"""The embedded default's web server: the site and MCP at /mcp/ on uvicorn, in a thread of this process.

It serves the same composition as ``config.asgi`` (production), with the same uvicorn options
(``config.asgi_worker``) and the apps' static files served from their folders as ``runserver`` does,
so no ``collectstatic`` is needed.
"""

from __future__ import annotations

import threading
import time

import uvicorn
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.servers.basehttp import get_internal_wsgi_application

from config.asgi_worker import UVICORN_OPTIONS
from leaderboard.mcp_server.http import site_with_mcp


class ServeError(RuntimeError):
    """The server could not start (typically: the port is taken)."""


class InProcessServer:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 8000) -> None:
        application = site_with_mcp(StaticFilesHandler(get_internal_wsgi_application()))
        config = uvicorn.Config(
            application, host=host, port=port, lifespan="on", log_level="warning", **UVICORN_OPTIONS
        )
        self.server = uvicorn.Server(config)
        self.host = host
        self.thread = threading.Thread(target=self._run, name="hindsight-site", daemon=True)
        self._failure: BaseException | None = None

    def _run(self) -> None:
        try:
            self.server.run()
        except BaseException as exc:  # reported by start()
            self._failure = exc

    def start(self, timeout: float = 30.0) -> InProcessServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.server.started:
            # uvicorn logs a taken port and exits (SystemExit) rather than raising an OSError.
            failure = self._failure
            reason = str(failure) if failure and not isinstance(failure, SystemExit) else "the address is not available"
            self.stop()
            raise ServeError(reason)
        return self

    @property
    def port(self) -> int:
        """The bound port (useful when the server was asked for port 0)."""
        port: int = self.server.servers[0].sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def is_alive(self) -> bool:
        return self.thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(timeout)
