"""Production settings pass Django's deployment checks with a real-looking environment: HTTPS redirect
and HSTS on by default (and configurable), secure cookies, e-mail from the environment."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.dual_db

ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "hindsight.example.org",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://hindsight.example.org",
    "DATABASE_URL": "postgres://hindsight:secret@db.internal:5432/hindsight",
    "REDIS_URL": "redis://redis.internal:6379/0",
    "DJANGO_EMAIL_HOST": "smtp.example.org",
    "DJANGO_EMAIL_USE_TLS": "true",
    "DJANGO_DEFAULT_FROM_EMAIL": "Hindsight <noreply@hindsight.example.org>",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))}
    environ.update({**ENV, **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues (0 silenced)" in result.stdout


def test_security_and_email_settings_come_from_the_environment() -> None:
    code = (
        "import json; from django.conf import settings as s; print(json.dumps([s.SECURE_SSL_REDIRECT,"
        " s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, s.EMAIL_BACKEND,"
        " s.EMAIL_HOST, s.EMAIL_USE_TLS]))"
    )
    defaults = json.loads(manage("shell", "-v", "0", "-c", code).stdout.splitlines()[-1])
    assert defaults == [
        True,
        31536000,
        True,
        True,
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.org",
        True,
    ]
    changed = json.loads(
        manage(
            "shell", "-v", "0", "-c", code,
            DJANGO_SECURE_SSL_REDIRECT="false", DJANGO_SECURE_HSTS_SECONDS="0", DJANGO_EMAIL_HOST="",
        ).stdout.splitlines()[-1]
    )  # fmt: skip
    assert changed[:2] == [False, 0] and changed[4] == "django.core.mail.backends.dummy.EmailBackend"
    # Turning HTTPS off is allowed, and the deployment check says what it costs.
    warned = manage("check", "--deploy", DJANGO_SECURE_SSL_REDIRECT="false", DJANGO_SECURE_HSTS_SECONDS="0")
    assert "security.W008" in warned.stdout + warned.stderr and "security.W004" in warned.stdout + warned.stderr
