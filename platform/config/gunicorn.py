"""gunicorn settings for production: ``gunicorn config.wsgi --config python:config.gunicorn ...``.

gunicorn ignores a ``Connection`` header set by the application, and after a response it reads
the unread rest of a body before taking the next request on the connection, giving up (and
closing without a word) past a small limit. So the requests whose body the application will not
read to the end, a body declared larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (answered 413) or a
chunked one (read at most one byte past the limit), are marked here before the application runs:
their answer says ``Connection: close`` and the connection closes after it, so no client reuses it.
"""

from __future__ import annotations

from typing import Any


def pre_request(worker: Any, req: Any) -> None:
    from django.conf import settings

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING" or (
            name == "CONTENT-LENGTH" and limit is not None and value.isdigit() and int(value) > limit
        ):
            req.force_close()
            return
