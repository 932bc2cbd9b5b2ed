"""The server's entry point: MCP (Streamable HTTP) at /mcp/ and the Django site everywhere else.

Production runs it under gunicorn with uvicorn workers (README, "Production"); the embedded default
(``manage.py demo``) serves the same composition with uvicorn in a thread.
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
django_site = get_wsgi_application()

# Imported once Django is set up: the MCP server reads the settings and the models.
from leaderboard.mcp_server.http import site_with_mcp  # noqa: E402

application = site_with_mcp(django_site)
