"""Test settings: PostgreSQL and Redis from DATABASE_URL / REDIS_URL started by scripts/test.sh."""

from __future__ import annotations

from .base import *  # noqa: F403
from .base import DATABASES, STATIC_ROOT, VAR_DIR, env_bool

VAR_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests run tasks in-process unless a test starts a real worker (see tests/celery_worker.py); inside
# such a worker a task sends the tasks it starts over the broker, as in production, rather than
# running them itself (a grading run started by beat's sweeper belongs on the grade queue's workers).
CELERY_TASK_ALWAYS_EAGER = not env_bool("HINDSIGHT_WORKER_IN_TESTS")
CELERY_TASK_EAGER_PROPAGATES = True
# In-process tasks would embed every test forecast's graph as it is submitted, and every build its
# graph's events; the tests of that turn them on.
HINDSIGHT_EMBED_ON_SUBMIT = False
HINDSIGHT_EMBED_ON_BUILD = env_bool("HINDSIGHT_EMBED_ON_BUILD", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
HINDSIGHT_RATE_LIMIT_REQUESTS = 10_000
# Tests run agents' endpoints on http://127.0.0.1.
HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = True
# A SQLite test database is a file, as in the product: Django's default in-memory test database
# uses a shared cache, whose table locks fail at once ("database table is locked") when two
# threads write, where a file waits for the busy timeout.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": f"{DATABASES['default']['NAME']}.test"}
