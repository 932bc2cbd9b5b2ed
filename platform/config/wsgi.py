from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
django_application = get_wsgi_application()

from config.http_server import read_unsized_bodies  # noqa: E402  (needs the settings configured above)

application = read_unsized_bodies(django_application)
