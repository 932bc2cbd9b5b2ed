"""uvicorn as both server modes run it: the production command's gunicorn worker class
(``--worker-class config.asgi_worker.UvicornWorker``) and the embedded default's server options.

uvicorn by default rewrites the client address (and scheme) from ``X-Forwarded-For`` for peers in
``FORWARDED_ALLOW_IPS`` (127.0.0.1 unless set) before the application sees a request. The site
decides whom to believe itself, from ``HINDSIGHT_TRUSTED_PROXIES`` (``leaderboard.throttling``), so
uvicorn hands it the connection's peer unchanged: otherwise any local process, or a proxy set up
only in one of two places, could choose the address its rate limit and log-in lockout count.
"""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker as _StockWorker

UVICORN_OPTIONS: dict[str, Any] = {"proxy_headers": False}


class UvicornWorker(_StockWorker):
    CONFIG_KWARGS = {**_StockWorker.CONFIG_KWARGS, **UVICORN_OPTIONS}
