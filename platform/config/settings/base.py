"""Settings shared by every environment; differences come from environment variables."""

from __future__ import annotations

import ipaddress
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parents[3]
VAR_DIR = Path(os.environ.get("HINDSIGHT_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def env_networks(name: str) -> list[str]:
    """A comma-separated list of IP addresses or networks, each checked here."""
    items = [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address or network ({exc})") from exc
    return items


def lost_client_options() -> str:
    """PostgreSQL session settings that make the server drop a connection whose host has gone silent
    (its link cut, its power lost) after about HINDSIGHT_DB_LOST_CLIENT_SECONDS: keep-alive probes on
    an idle connection, and a limit on unacknowledged data. Otherwise such a session lives on for
    about two hours (the kernel's keep-alive default), and so do the locks of the transaction it had
    open: a grading run taking over a lost host's question would wait for them that long. Empty for 0."""
    seconds = env_int("HINDSIGHT_DB_LOST_CLIENT_SECONDS", 25)
    if seconds <= 0:
        return ""
    idle, interval = max(1, round(seconds * 0.4)), max(1, round(seconds * 0.2))
    return (
        f"-c tcp_keepalives_idle={idle} -c tcp_keepalives_interval={interval} -c tcp_keepalives_count=3"
        f" -c tcp_user_timeout={seconds * 1000}"
    )


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "insecure-dev-key-only-for-local-use")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ingestion",
    "grading",
    "leaderboard",
    "endpoints",
    "sampleworld",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # API: 413 JSON for oversized bodies before anything reads them, 400 for NUL in the query.
    "leaderboard.middleware.ApiRequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Log-in lockout, sign-up and password-reset limits (after CSRF: forged posts are not counted).
    "leaderboard.account_throttle.AccountThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# DATABASE_URL: sqlite:///PATH or postgres://…; unset means the embedded SQLite file.
DEFAULT_SQLITE_PATH = VAR_DIR / "hindsight.sqlite3"
DATABASES: dict[str, Any] = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{DEFAULT_SQLITE_PATH}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
        # A kept connection is checked before a request reuses it, so that the first requests after
        # a database restart get a new connection instead of failing on the one the restart cut.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        # WAL lets the server read while an in-process task writes.
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        # Every transaction takes the write lock when it begins, waiting for it up to the busy
        # timeout: a deferred transaction that read first could not wait when it came to write
        # (SQLite answers "database is locked" at once rather than risk a deadlock).
        transaction_mode="IMMEDIATE",
        timeout=env_float("HINDSIGHT_SQLITE_BUSY_TIMEOUT_SECONDS", 30.0),
    )


if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Sent with every connection (a pooler such as PgBouncer refuses them: set 0 and configure the
    # server's own tcp_keepalives_* settings instead).
    _lost_client = lost_client_options()
    if _lost_client:
        _db_options = DATABASES["default"].setdefault("OPTIONS", {})
        _db_options["options"] = f"{_db_options.get('options', '')} {_lost_client}".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# REDIS_URL: broker and cache; unset means in-process tasks and a local-memory cache.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "hindsight"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# E-mail (password reset): an SMTP server when DJANGO_EMAIL_HOST is set; otherwise messages go to the
# server's console (the embedded default). Production turns "no server" into "no e-mail" (production.py).
EMAIL_HOST = os.environ.get("DJANGO_EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get("DJANGO_EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("DJANGO_EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("DJANGO_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("DJANGO_EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("DJANGO_EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("DJANGO_EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("DJANGO_EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = os.environ.get("DJANGO_DEFAULT_FROM_EMAIL", "Hindsight <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard:dashboard"
LOGOUT_REDIRECT_URL = "leaderboard:home"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# Project assets, vendored libraries included (static/vendor/README.md lists versions and licences).
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Requests larger than this answer 413 (forecast bodies, forms).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("HINDSIGHT_MAX_BODY_BYTES", 1024 * 1024)
# Threads per server process that run the Django site's requests (config.asgi); /mcp/ tool calls
# run in the event loop's own worker threads. Each thread keeps its own database connection
# (DATABASE_CONN_MAX_AGE), so processes x threads bounds the site's connections.
HINDSIGHT_SITE_THREADS = env_int("HINDSIGHT_SITE_THREADS", 4)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "leaderboard.authentication.AgentTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_THROTTLE_CLASSES": ["leaderboard.throttling.TokenRateThrottle"],
    # Bodies are JSON only, refused whole when they hold text no column can store (NUL, lone
    # surrogates) or nest deeper than any forecast does.
    "DEFAULT_PARSER_CLASSES": ["leaderboard.apis.parsing.CheckedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "leaderboard.api_errors.exception_handler",
    # Accept NaN/Infinity in request bodies (Python's json.dumps writes them) so that validation can
    # name the field that holds one; responses never contain them.
    "STRICT_JSON": False,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Hindsight API",
    "DESCRIPTION": "Forecasting agents submit forecasts, open replay sessions and read evidence as of a date.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI served from this site (no CDN): the docs work on a machine with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice sets are both called "status": name them after what they describe.
    "ENUM_NAME_OVERRIDES": {
        "QuestionStatusEnum": "ingestion.models.Question.Status",
        "DeliveryStatusEnum": "endpoints.models.Delivery.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "leaderboard.schema.add_common_errors",
    ],
}

# API rate limit (every endpoint): requests per window (seconds) per agent token, else per signed-in
# user, else per client address; 0 turns it off.
HINDSIGHT_RATE_LIMIT_REQUESTS = env_int("HINDSIGHT_RATE_LIMIT_REQUESTS", 600)
HINDSIGHT_RATE_LIMIT_WINDOW = env_int("HINDSIGHT_RATE_LIMIT_WINDOW", 60)
# With the cache (Redis) unreachable: serve requests uncounted (true) or answer 503 + Retry-After.
HINDSIGHT_RATE_LIMIT_FAIL_OPEN = env_bool("HINDSIGHT_RATE_LIMIT_FAIL_OPEN", False)
# Addresses or networks of reverse proxies whose X-Forwarded-For is believed (comma-separated, e.g.
# "10.0.0.0/8,127.0.0.1"); empty: the client address is the connection's peer address.
HINDSIGHT_TRUSTED_PROXIES = env_networks("HINDSIGHT_TRUSTED_PROXIES")
# Log-in lockout: failed attempts per username and per client address within the window (seconds).
HINDSIGHT_LOGIN_FAILURES_PER_USER = env_int("HINDSIGHT_LOGIN_FAILURES_PER_USER", 5)
HINDSIGHT_LOGIN_FAILURES_PER_ADDRESS = env_int("HINDSIGHT_LOGIN_FAILURES_PER_ADDRESS", 30)
HINDSIGHT_LOGIN_LOCKOUT_SECONDS = env_int("HINDSIGHT_LOGIN_LOCKOUT_SECONDS", 900)
# Sign-up and password-reset forms: submissions per client address per hour (reset: also per e-mail).
HINDSIGHT_ACCOUNT_FORMS_PER_HOUR = env_int("HINDSIGHT_ACCOUNT_FORMS_PER_HOUR", 20)

# Fetching feeds and market APIs (ingestion/fetching.py).
HINDSIGHT_FETCH_TIMEOUT_SECONDS = env_float("HINDSIGHT_FETCH_TIMEOUT_SECONDS", 20.0)
HINDSIGHT_FETCH_MAX_BYTES = env_int("HINDSIGHT_FETCH_MAX_BYTES", 5 * 1024 * 1024)
HINDSIGHT_FETCH_MAX_REDIRECTS = env_int("HINDSIGHT_FETCH_MAX_REDIRECTS", 5)
# Source health (ingestion/services/sources.py): after n consecutive failures the next attempt
# waits min(MAX, BASE * 2**(n-1)) plus up to 20% jitter, or longer when the server sent Retry-After.
HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS = env_int("HINDSIGHT_SOURCE_BACKOFF_BASE_SECONDS", 60)
HINDSIGHT_SOURCE_BACKOFF_MAX_SECONDS = env_int("HINDSIGHT_SOURCE_BACKOFF_MAX_SECONDS", 6 * 3600)
HINDSIGHT_SOURCE_RETRY_AFTER_MAX_SECONDS = env_int("HINDSIGHT_SOURCE_RETRY_AFTER_MAX_SECONDS", 24 * 3600)
HINDSIGHT_SOURCE_CLAIM_STALE_SECONDS = env_int("HINDSIGHT_SOURCE_CLAIM_STALE_SECONDS", 600)

# Celery: Redis broker when REDIS_URL is set; otherwise tasks run in-process.
# memory://localhost: eager tasks still open a producer, and a host-less URL logs a warning each time.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Ride out a broker outage: retry connecting for ever (Celery gives up after 100 attempts by
# default, and then the worker exits), also when the broker is down as the worker starts.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# Redis with the fix that keeps a worker alive through a broker crash (see the module).
CELERY_BROKER_TRANSPORT = "config.redis_broker:Transport" if REDIS_URL.startswith("redis://") else None
# A task running when the broker goes away finishes its work (it is idempotent); cancelling it
# would only make it start again once the broker is back.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {
    # An unacknowledged message (its worker was killed) goes back to its queue after this many
    # seconds. It must exceed the longest countdown a task is sent with (a delivery's backoff:
    # HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS plus 10% jitter): a worker holds such a task
    # unacknowledged until it is due, and a shorter timeout would run it twice. A killed grading
    # run is taken over much sooner through its claim (HINDSIGHT_GRADING_RECOVERY_SECONDS).
    "visibility_timeout": env_int(
        "HINDSIGHT_BROKER_VISIBILITY_TIMEOUT",
        max(3600, int(1.1 * env_float("HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS", 3600.0)) + 600),
    ),
    # Notice a dead or half-open connection within seconds, not at the next command.
    "health_check_interval": 10,
    "socket_keepalive": True,
    "socket_connect_timeout": 5,
}
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "ingestion.tasks.*": {"queue": "ingest"},
    "grading.tasks.*": {"queue": "grade"},
    "leaderboard.tasks.grade_*": {"queue": "grade"},
    "leaderboard.tasks.regrade_*": {"queue": "grade"},
    "leaderboard.tasks.embed_*": {"queue": "grade"},
    # Calls to agents' endpoints wait on other people's servers: a queue of their own keeps a slow
    # agent from holding the workers that ingest and grade.
    "endpoints.tasks.deliver_*": {"queue": "deliver"},
}
CELERY_TIMEZONE = "UTC"
# How often beat looks (grading, leaderboard/tasks.py) for claims of runs that died (a worker killed whole); the stall after such a
# kill is at most STALE + RECOVERY seconds plus the new run's start.
HINDSIGHT_GRADING_RECOVERY_SECONDS = env_int("HINDSIGHT_GRADING_RECOVERY_SECONDS", 15)
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "close-questions": {
        "task": "ingestion.tasks.close_due_questions",
        "schedule": timedelta(minutes=1),
    },
    "poll-due-sources": {
        "task": "ingestion.tasks.poll_due_sources",
        "schedule": timedelta(minutes=1),
    },
    "generate-questions-from-news": {
        "task": "ingestion.tasks.generate_questions_from_news",
        "schedule": crontab(minute=0),
    },
    "rebuild-standings": {
        "task": "leaderboard.tasks.rebuild_standings",
        "schedule": crontab(hour=3, minute=0),
    },
    "sweep-grading": {
        "task": "leaderboard.tasks.sweep_pending_grading",
        "schedule": timedelta(minutes=5),
    },
    # Grading runs that died with their whole worker: taken over within a minute of the kill.
    "recover-abandoned-grading": {
        "task": "leaderboard.tasks.recover_abandoned_grading",
        "schedule": timedelta(seconds=HINDSIGHT_GRADING_RECOVERY_SECONDS),
    },
    "sweep-deliveries": {
        "task": "endpoints.tasks.sweep_deliveries",
        "schedule": timedelta(seconds=30),
    },
}

# An OpenAI-compatible server for question generation, hindsight graphs and the LRAE judge.
# Unset HINDSIGHT_LLM_MODEL means no LLM is configured: offline builders and lexical judges run.
LLM_BASE_URL = os.environ.get("HINDSIGHT_LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("HINDSIGHT_LLM_API_KEY", os.environ.get("OPENAI_API_KEY", ""))
LLM_MODEL = os.environ.get("HINDSIGHT_LLM_MODEL", "")
# The longest one call may wait; each stage's own wall-clock budget (below) usually ends it first.
LLM_TIMEOUT_SECONDS = env_float("HINDSIGHT_LLM_TIMEOUT_SECONDS", 300.0)
# The model's context window as the server runs it (llama.cpp: --n_ctx / -c), and the cap on any one
# answer. Prompts are assembled to leave room for the answer; nothing longer is ever sent.
LLM_CONTEXT_TOKENS = env_int("HINDSIGHT_LLM_CONTEXT_TOKENS", 8192)
# 0 (unset): derived from the window (ingestion.llm.config.derived_max_output).
LLM_MAX_OUTPUT_TOKENS = env_int("HINDSIGHT_LLM_MAX_OUTPUT_TOKENS", 0)
# Per-stage answer tokens and wall-clock seconds over the defaults in ingestion/llm/config.py,
# e.g. "hindsight_graph=3000/600,judge=64/300".
LLM_STAGE_LIMITS = os.environ.get("HINDSIGHT_LLM_STAGE_LIMITS", "")
# How to ask for JSON: auto (detected once per server and model), json_schema, tools or text.
LLM_STRUCTURED_OUTPUT = os.environ.get("HINDSIGHT_LLM_STRUCTURED_OUTPUT", "auto")

# Questions from news (ingestion/services/question_generation.py): articles published in the last
# WINDOW_HOURS are clustered by TF-IDF cosine >= SIMILARITY; at most MAX_CLUSTERS new clusters of
# MIN..MAX_CLUSTER_SIZE articles per hourly run, up to MAX_QUESTIONS_PER_CLUSTER drafts each.
QUESTION_GENERATION_WINDOW_HOURS = env_int("HINDSIGHT_QGEN_WINDOW_HOURS", 48)
QUESTION_GENERATION_SIMILARITY = env_float("HINDSIGHT_QGEN_SIMILARITY", 0.3)
QUESTION_GENERATION_MIN_CLUSTER_SIZE = env_int("HINDSIGHT_QGEN_MIN_CLUSTER_SIZE", 2)
QUESTION_GENERATION_MAX_CLUSTER_SIZE = env_int("HINDSIGHT_QGEN_MAX_CLUSTER_SIZE", 12)
QUESTION_GENERATION_MAX_CLUSTERS = env_int("HINDSIGHT_QGEN_MAX_CLUSTERS", 5)
QUESTION_GENERATION_MAX_QUESTIONS_PER_CLUSTER = env_int("HINDSIGHT_QGEN_MAX_QUESTIONS_PER_CLUSTER", 3)

# Hindsight graphs (grading/): quality thresholds of WorldReasoner, Appendix B.3 (docs/methods.md), build budgets and windows.
HINDSIGHT_GRAPH_MIN_DEPTH = env_int("HINDSIGHT_GRAPH_MIN_DEPTH", 3)
HINDSIGHT_GRAPH_MIN_EVENTS = env_int("HINDSIGHT_GRAPH_MIN_EVENTS", 10)
HINDSIGHT_GRAPH_MIN_SOURCES = env_int("HINDSIGHT_GRAPH_MIN_SOURCES", 20)
HINDSIGHT_GRAPH_MIN_LINKS = env_int("HINDSIGHT_GRAPH_MIN_LINKS", 1)
HINDSIGHT_GRAPH_MIN_LINK_CONFIDENCE = env_float("HINDSIGHT_GRAPH_MIN_LINK_CONFIDENCE", 0.6)
HINDSIGHT_GRAPH_MIN_LINK_STRENGTH = env_float("HINDSIGHT_GRAPH_MIN_LINK_STRENGTH", 0.3)
# Model rounds (first answer + corrections) the LLM builder may spend on one graph.
HINDSIGHT_GRAPH_BUDGET = env_int("HINDSIGHT_GRAPH_BUDGET", 4)
# Stage 1 reads evidence published up to the resolution time plus this many days.
HINDSIGHT_EVIDENCE_WINDOW_DAYS = env_int("HINDSIGHT_EVIDENCE_WINDOW_DAYS", 7)
# Events may predate t0 by this many days (background causes); none may postdate the resolution.
HINDSIGHT_GRAPH_LOOKBACK_DAYS = env_int("HINDSIGHT_GRAPH_LOOKBACK_DAYS", 30)
HINDSIGHT_GRAPH_MAX_ARTICLES = env_int("HINDSIGHT_GRAPH_MAX_ARTICLES", 120)
HINDSIGHT_GRAPH_MAX_EVENTS = env_int("HINDSIGHT_GRAPH_MAX_EVENTS", 30)
# Questions one build task takes when many resolve at once (a round import): one task per this many.
HINDSIGHT_BUILD_QUESTIONS_PER_TASK = env_int("HINDSIGHT_BUILD_QUESTIONS_PER_TASK", 50)

# Grading (leaderboard/services/grade_runs.py, grade_scoring.py). Matcher parameters are stored on every grade.
HINDSIGHT_MATCHER_THRESHOLD = env_float("HINDSIGHT_MATCHER_THRESHOLD", 0.45)
HINDSIGHT_MATCHER_DATE_WINDOW_DAYS = env_int("HINDSIGHT_MATCHER_DATE_WINDOW_DAYS", 7)
HINDSIGHT_MATCHER_BM25_WEIGHT = env_float("HINDSIGHT_MATCHER_BM25_WEIGHT", 0.6)
HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT = env_float("HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT", 0.4)
HINDSIGHT_KEY_EVENTS_TOP_K = env_int("HINDSIGHT_KEY_EVENTS_TOP_K", 5)
# Licence stated on the open-data exports (/data/); imported questions keep their source's licence.
HINDSIGHT_DATA_LICENCE = os.environ.get("HINDSIGHT_DATA_LICENCE", "CC BY-SA 4.0")
# Event matcher: "guarded" (the default: hybrid's similarity with a multilingual embedding for
# paraphrases, and pairs refused when polarity, direction, roles or numbers disagree), "hybrid" (BM25 +
# token F1 only, for comparison), "worldreasoner" (the public WorldReasoner evaluator reproduced, to check
# a KER published with it) or "semantic" (all-MiniLM-L6-v2 cosine; needs pip install -r
# requirements-semantic.txt). The semantic matcher has its own threshold (the paper's 0.55).
HINDSIGHT_MATCHER = os.environ.get("HINDSIGHT_MATCHER", "guarded")
HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD = env_float("HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD", 0.55)
# Embed and parse a forecast graph's event texts (guarded matcher) on the grade queue once the
# forecast is stored, so grading finds the vectors and parse facts stored (grading/embeddings.py,
# grading/text_facts.py). Off by default without a
# broker: tasks would run inside the submitting request, and grading embeds what is missing anyway.
HINDSIGHT_EMBED_ON_SUBMIT = env_bool("HINDSIGHT_EMBED_ON_SUBMIT", bool(REDIS_URL))
# Embed and parse a hindsight graph's event texts (guarded matcher) as the graph is stored, by the
# worker that built it, so grading finds the vectors and parse facts stored.
HINDSIGHT_EMBED_ON_BUILD = env_bool("HINDSIGHT_EMBED_ON_BUILD", True)
# Lexical LRAE judge (used when no LLM is configured): token F1 needed to match a gold item.
HINDSIGHT_LEXICAL_JUDGE_THRESHOLD = env_float("HINDSIGHT_LEXICAL_JUDGE_THRESHOLD", 0.5)
# LRAE stage 2: evidence articles retrieved per unmatched prediction.
HINDSIGHT_JUDGE_EVIDENCE_ARTICLES = env_int("HINDSIGHT_JUDGE_EVIDENCE_ARTICLES", 3)
# Forecasts scored and written per batch; on PostgreSQL one batch is written while the next is scored.
HINDSIGHT_GRADING_BATCH_SIZE = env_int("HINDSIGHT_GRADING_BATCH_SIZE", 500)
# Questions graded together by one task (the sweeper and `regrade` send them in groups of this size).
HINDSIGHT_GRADING_QUESTIONS_PER_RUN = env_int("HINDSIGHT_GRADING_QUESTIONS_PER_RUN", 20)
# A grading run stamps its claim every HEARTBEAT seconds; a claim silent for STALE seconds belongs to a
# dead run and is taken over by the next delivery or sweep.
HINDSIGHT_GRADING_HEARTBEAT_SECONDS = env_float("HINDSIGHT_GRADING_HEARTBEAT_SECONDS", 10.0)
HINDSIGHT_GRADING_CLAIM_STALE_SECONDS = env_int("HINDSIGHT_GRADING_CLAIM_STALE_SECONDS", 30)
# Leaderboard: an agent needs this many questions carrying the rank metric to be ranked (else provisional).
HINDSIGHT_MIN_RANKED_N = env_int("HINDSIGHT_MIN_RANKED_N", 10)
# Leaderboard page size.
HINDSIGHT_LEADERBOARD_PAGE_SIZE = env_int("HINDSIGHT_LEADERBOARD_PAGE_SIZE", 50)
HINDSIGHT_GRADING_SWEEP_LIMIT = env_int("HINDSIGHT_GRADING_SWEEP_LIMIT", 500)

# Agents the platform calls (endpoints/): questions POSTed to an agent's registered endpoint.
# The address agents are told to call back (forecasts, evidence), e.g. https://hindsight.example.org.
HINDSIGHT_PUBLIC_URL = os.environ.get("HINDSIGHT_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# Fernet keys (comma-separated; the first encrypts, all decrypt) for the endpoints' signing secrets;
# unset: one key derived from DJANGO_SECRET_KEY (and its fallbacks).
HINDSIGHT_ENDPOINT_SECRET_KEYS = [k for k in os.environ.get("HINDSIGHT_ENDPOINT_SECRET_KEYS", "").split(",") if k]
# Endpoints must be https on a public address; this also allows http and loopback hosts (dev, tests).
HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = env_bool("HINDSIGHT_DELIVERY_ALLOW_LOOPBACK", False)
HINDSIGHT_DELIVERY_TIMEOUT_SECONDS = env_float("HINDSIGHT_DELIVERY_TIMEOUT_SECONDS", 30.0)
HINDSIGHT_DELIVERY_MAX_RESPONSE_BYTES = env_int("HINDSIGHT_DELIVERY_MAX_RESPONSE_BYTES", 1024 * 1024)
# After a failed attempt n the next waits min(MAX, BASE * 2**(n-1)) plus up to 10% jitter (or the
# agent's Retry-After, up to MAX); after MAX_ATTEMPTS attempts the delivery gives up.
HINDSIGHT_DELIVERY_MAX_ATTEMPTS = env_int("HINDSIGHT_DELIVERY_MAX_ATTEMPTS", 5)
HINDSIGHT_DELIVERY_BACKOFF_BASE_SECONDS = env_float("HINDSIGHT_DELIVERY_BACKOFF_BASE_SECONDS", 30.0)
HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS = env_float("HINDSIGHT_DELIVERY_BACKOFF_MAX_SECONDS", 3600.0)
# Per-agent limit of deliveries in flight (the team may choose less, up to MAX_CONCURRENCY).
HINDSIGHT_DELIVERY_CONCURRENCY = env_int("HINDSIGHT_DELIVERY_CONCURRENCY", 2)
HINDSIGHT_DELIVERY_MAX_CONCURRENCY = env_int("HINDSIGHT_DELIVERY_MAX_CONCURRENCY", 8)
# A claim older than this is a lost worker's: the sweeper counts the attempt as failed and re-drives.
HINDSIGHT_DELIVERY_CLAIM_STALE_SECONDS = env_int("HINDSIGHT_DELIVERY_CLAIM_STALE_SECONDS", 300)
# Lifetime of the session-scoped evidence token sent with a replay question.
HINDSIGHT_DELIVERY_EVIDENCE_TOKEN_SECONDS = env_int("HINDSIGHT_DELIVERY_EVIDENCE_TOKEN_SECONDS", 3600)
# Deliveries the sweeper starts per run.
HINDSIGHT_DELIVERY_SWEEP_LIMIT = env_int("HINDSIGHT_DELIVERY_SWEEP_LIMIT", 200)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# Tests that run beat inside a real worker want every periodic task due within seconds.
if env_bool("HINDSIGHT_FAST_BEAT"):
    for _entry in CELERY_BEAT_SCHEDULE.values():
        _entry["schedule"] = timedelta(seconds=2)
