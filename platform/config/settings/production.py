"""Production: PostgreSQL and Redis required, secrets from the environment."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import ALLOWED_HOSTS, DATABASES, EMAIL_HOST, REDIS_URL, env_bool, env_int

DEBUG = False
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production")
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL in production")
if not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL must be set in production (Celery broker and cache)")
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Agents' endpoints must be https on public addresses: never plain http, never this network's hosts.
HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = False
# The address agents call back; by default the first allowed host over https.
HINDSIGHT_PUBLIC_URL = (
    os.environ.get("HINDSIGHT_PUBLIC_URL") or f"https://{ALLOWED_HOSTS[0] if ALLOWED_HOSTS else 'localhost'}"
).rstrip("/")
# HTTPS only: redirect plain HTTP and tell browsers to stay on HTTPS (HSTS). On by default; turn
# the redirect off only where a proxy already redirects, and HSTS only while moving to HTTPS.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", True)
# Without an SMTP server there is no e-mail: the password reset page says so instead of pretending.
if not EMAIL_HOST and not os.environ.get("DJANGO_EMAIL_BACKEND"):
    EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
