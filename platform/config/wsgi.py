"""The Django site as a WSGI application (``WSGI_APPLICATION``). The servers run it inside the ASGI
application of ``config.asgi``, which adds /mcp/ and the request-body limit in front of it."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
application = get_wsgi_application()
