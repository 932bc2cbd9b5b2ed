"""DATABASE_URL / REDIS_URL select the database, broker and cache; production refuses the embedded default.

Each case imports a settings module in a fresh interpreter with a controlled environment, because
settings are read once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib, json, sys
sys.path.insert(1, "platform")
try:
    s = importlib.import_module(sys.argv[1])
except Exception as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
else:
    db = s.DATABASES["default"]
    print(json.dumps({
        "engine": db["ENGINE"], "name": str(db["NAME"]), "conn_max_age": db.get("CONN_MAX_AGE"),
        "eager": s.CELERY_TASK_ALWAYS_EAGER, "broker": s.CELERY_BROKER_URL,
        "cache": s.CACHES["default"]["BACKEND"], "debug": s.DEBUG,
    }))
"""

CLEARED = ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "HINDSIGHT_VAR_DIR", "DJANGO_DEBUG")


def probe(module: str, **env: str) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if k not in CLEARED and k != "DJANGO_SETTINGS_MODULE"}
    environ.update(env)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_unset_means_sqlite_under_var_and_in_process_tasks() -> None:
    found = probe("config.settings.dev")
    assert found["engine"] == "django.db.backends.sqlite3"
    assert Path(found["name"]) == ROOT / "var" / "hindsight.sqlite3"
    assert found["eager"] is True and found["broker"].startswith("memory://")
    assert found["cache"] == "django.core.cache.backends.locmem.LocMemCache"
    assert "var/" in (ROOT / ".gitignore").read_text().split()


def test_database_url_selects_sqlite_path_or_postgresql() -> None:
    assert probe("config.settings.dev", DATABASE_URL="sqlite:////tmp/elsewhere.sqlite3")["name"] == (
        "/tmp/elsewhere.sqlite3"
    )
    found = probe("config.settings.dev", DATABASE_URL="postgres://hs:pw@db.internal:5433/hindsight")
    assert (found["engine"], found["name"]) == ("django.db.backends.postgresql", "hindsight")


def test_redis_url_selects_broker_cache_and_real_workers() -> None:
    found = probe("config.settings.dev", REDIS_URL="redis://127.0.0.1:6399/2")
    assert found["eager"] is False and found["broker"] == "redis://127.0.0.1:6399/2"
    assert found["cache"] == "django.core.cache.backends.redis.RedisCache"


PRODUCTION = {
    "DJANGO_SECRET_KEY": "a-long-production-secret-" + "x" * 40,
    "DATABASE_URL": "postgres://hs:pw@db.internal:5432/hindsight",
    "REDIS_URL": "redis://redis.internal:6379/0",
}


def test_production_with_postgresql_and_redis() -> None:
    found = probe("config.settings.production", **PRODUCTION)
    assert found["engine"] == "django.db.backends.postgresql" and found["eager"] is False
    assert found["debug"] is False and found["conn_max_age"] == 60


@pytest.mark.parametrize(
    ("missing", "replacement", "message"),
    [
        ("DJANGO_SECRET_KEY", None, "DJANGO_SECRET_KEY must be set in production"),
        ("DATABASE_URL", None, "DATABASE_URL must point at PostgreSQL in production"),
        ("DATABASE_URL", "sqlite:////tmp/prod.sqlite3", "DATABASE_URL must point at PostgreSQL in production"),
        ("REDIS_URL", None, "REDIS_URL must be set in production"),
    ],
)
def test_production_refuses_the_embedded_default(missing: str, replacement: str | None, message: str) -> None:
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    if replacement is not None:
        env[missing] = replacement
    found = probe("config.settings.production", **env)
    assert found["error"] == "ImproperlyConfigured" and message in found["message"]
