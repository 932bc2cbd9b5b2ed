"""Local development: the embedded default (SQLite file, in-process tasks) unless env says otherwise."""

from __future__ import annotations

from .base import *  # noqa: F403
from .base import STATIC_ROOT, VAR_DIR, env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
# An agent under development listens on http://127.0.0.1:…
HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = env_bool("HINDSIGHT_DELIVERY_ALLOW_LOOPBACK", True)
VAR_DIR.mkdir(parents=True, exist_ok=True)
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
