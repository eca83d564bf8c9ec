"""Settings, all from the environment.

With nothing set the app runs for one person on a laptop: SQLite in the
project folder and Celery tasks run in-process. DATABASE_URL and
CELERY_BROKER_URL switch to PostgreSQL and real workers; DJANGO_ENV=production
turns on the deployment hardening that `manage.py check --deploy` asks for.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = env(name).strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError as error:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from error


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


PRODUCTION = env("DJANGO_ENV", "development") == "production"
# Off unless asked for: the debug page shows settings (the broker URL among
# them) to anyone who can make a page fail.
DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = env("DJANGO_SECRET_KEY")
# docker-compose.yml passes "replace-me" when nothing is set, so that its
# config validates; production refuses it.
if PRODUCTION and (not SECRET_KEY or SECRET_KEY.startswith("replace-me")):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_ENV=production")
if not SECRET_KEY:
    SECRET_KEY = "development-only-key-never-use-it-in-production-3f9c2a7d1e8b4c6a"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "" if PRODUCTION else "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",
    "axes",
    "csp",
    "auditlog",
    "reviewapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "reviewapp.core.middleware.NulRefusalMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The person behind each change on the audit trail (reviewapp.core.audit).
    "auditlog.middleware.AuditlogMiddleware",
    # Before any view reads the body, so an oversized upload is refused unread.
    "reviewapp.core.middleware.UploadLimitMiddleware",
    "reviewapp.core.middleware.NulFieldRefusalMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "reviewapp.urls"
WSGI_APPLICATION = "reviewapp.wsgi.application"

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
                "reviewapp.core.context.deployment",
                "reviewapp.core.context.roles",
                "csp.context_processors.nonce",
            ],
        },
    },
]

# SQLite in the project folder unless DATABASE_URL names another database.
DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"), conn_max_age=60
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for
# one user name, that account is refused for the cool-off, even with the right
# password, and the login page says so (HTTP 429). By account, not by address:
# behind a proxy or an office's NAT every client shares one address, so
# locking addresses would lock everyone out. `manage.py axes_reset_username
# NAME` lifts a lockout early.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("DJANGO_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("DJANGO_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username"]
# axes.W006 wants the address among the lockout parameters, for setups that
# lock by address and user agent or cookie; locking by account has nothing
# for an attacker to rotate.
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/login.html"
# Its start-up line ("AXES: BEGIN …") printed on every command, the demo's five times.
AXES_VERBOSE = False

# Pipeline tokens (reviewapp.models.ApiToken) expire after this many days
# unless their maker chooses another lifetime, never more than the maximum.
API_TOKEN_DAYS = env_int("REVIEWAPP_API_TOKEN_DAYS", 90)
API_TOKEN_MAX_DAYS = env_int("REVIEWAPP_API_TOKEN_MAX_DAYS", 365)

# Content-Security-Policy (django-csp): scripts and style sheets only from
# this site, or an inline script that carries the request's nonce
# (CSP_NONCE in templates); no eval. Style attributes stay allowed because
# the progress bars set their width in one, from a number the server computed,
# and htmx swaps them in every second; a style attribute cannot run script,
# and <style> elements and foreign style sheets stay blocked.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LANGUAGE_CODE = "en"
TIME_ZONE = env("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# Outside production whitenoise serves static files straight from the apps
# and static/, so runserver shows a styled site with DEBUG off and no
# collectstatic; production serves the collected, hashed copies.
WHITENOISE_USE_FINDERS = not PRODUCTION
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Uploaded run logs are kept as evidence, by their sha256, with pending
# imports, in the "data" storage (reviewapp.core.files). By default that is
# this folder, which web and workers must then share; with
# REVIEWAPP_STORAGE=s3 it is a bucket of any S3 API, and the folder only
# holds each host's own files in transit (an upload being checked, a log
# being read), so hosts share no disk.
DATA_DIR = Path(env("REVIEWAPP_DATA_DIR", str(BASE_DIR / "var")))
MEDIA_ROOT = DATA_DIR / "media"


def s3_storage(environ) -> dict:
    """The "data" storage on an S3 API, from REVIEWAPP_S3_* in ``environ``
    (the tests build theirs the same way)."""
    from botocore.config import Config

    if not environ.get("REVIEWAPP_S3_BUCKET"):
        raise ImproperlyConfigured("REVIEWAPP_STORAGE=s3 needs REVIEWAPP_S3_BUCKET")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": environ["REVIEWAPP_S3_BUCKET"],
            # Empty for AWS itself; MinIO, Ceph or moto at their address.
            "endpoint_url": environ.get("REVIEWAPP_S3_ENDPOINT_URL") or None,
            "region_name": environ.get("REVIEWAPP_S3_REGION") or None,
            # The keys, when not given here, come from boto3's own chain
            # (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, an instance role).
            "access_key": environ.get("REVIEWAPP_S3_ACCESS_KEY") or None,
            "secret_key": environ.get("REVIEWAPP_S3_SECRET_KEY") or None,
            # A folder in the bucket, so that one bucket can serve several installations.
            "location": environ.get("REVIEWAPP_S3_PREFIX", ""),
            # MinIO and most self-hosted stores want bucket/key paths, not bucket host names.
            "addressing_style": environ.get("REVIEWAPP_S3_ADDRESSING", "path"),
            # A log is named by its sha256: the same name is the same content.
            "file_overwrite": True,
            "default_acl": None,
            "querystring_auth": False,
            # An object read whole spills to disk past this, never held in memory.
            "max_memory_size": 8 * 1024 * 1024,
            # A store that does not answer is told within seconds (botocore
            # waits a minute a try by default); the task retries later.
            "client_config": Config(
                connect_timeout=5, read_timeout=60, retries={"max_attempts": 3, "mode": "standard"}
            ),
        },
    }


STORAGE_KIND = env("REVIEWAPP_STORAGE", "local")
if STORAGE_KIND == "local":
    STORAGES["data"] = {"BACKEND": "reviewapp.core.files.DataFolderStorage"}
elif STORAGE_KIND == "s3":
    STORAGES["data"] = s3_storage(os.environ)
else:
    raise ImproperlyConfigured(f"REVIEWAPP_STORAGE must be local or s3, not {STORAGE_KIND!r}")
# Files above this size are refused before they are stored.
MAX_UPLOAD_BYTES = int(env("REVIEWAPP_MAX_UPLOAD_MB", "1024")) * 1024 * 1024
# A line of a run log or question set (one answer, one question) longer than
# this is refused with a line error: scoring a huge answer is slow and its
# per-number results are bigger still.
MAX_ANSWER_BYTES = env_int("REVIEWAPP_MAX_ANSWER_KB", 100) * 1024

# Answers per scoring task: each running worker takes chunks of this size.
SCORING_CHUNK_ANSWERS = int(env("REVIEWAPP_SCORING_CHUNK", "20000"))
# Answers in one chunk of a judge run: a multiple of the usual concurrencies
# (4, 8, 16, 32), so a chunk's calls fill a judge's threads in whole rounds.
JUDGE_CHUNK_ANSWERS = int(env("REVIEWAPP_JUDGE_CHUNK", "64"))
# Every uploaded file is unpacked, hashed, checked for size and written to
# the data folder as it arrives: no temporary copy, no second pass
# (reviewapp.core.uploads).
FILE_UPLOAD_HANDLERS = ["reviewapp.core.uploads.ReceivingHandler"]

# Celery: without a broker, tasks run in-process when they are queued.
CELERY_TASK_ALWAYS_EAGER = not env("CELERY_BROKER_URL")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", "memory://")
# A judge's calls in flight are counted across every worker in this Redis
# (reviewapp.core.limits); by default the broker's, when it is Redis.
CALL_LIMITS_REDIS_URL = env("REVIEWAPP_LIMITS_REDIS_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
# A call's slot is held this long without renewal: a killed worker's slots come back after it.
CALL_SLOT_LEASE_SECONDS = env_int("REVIEWAPP_CALL_SLOT_LEASE_SECONDS", 30)

# Where judges may send calls and which variables may hold their keys
# (reviewapp/judges/endpoints.py): the providers' own APIs and *_API_KEY by
# default; a self-hosted model's address is added here by an administrator.
JUDGE_BASE_URLS = env_list("REVIEWAPP_JUDGE_BASE_URLS", "https://api.openai.com,https://api.anthropic.com")
JUDGE_KEY_VARIABLES = env_list("REVIEWAPP_JUDGE_KEY_VARIABLES", "*_API_KEY")
JUDGE_PRIVATE_ADDRESSES = env_bool("REVIEWAPP_JUDGE_PRIVATE_ADDRESSES", False)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", "reviewapp")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task is acknowledged when it ends, so a message whose worker died is
# delivered again: at once when a pool process dies, and after the visibility
# timeout when the whole worker does. The timeout must outlast the longest
# task (a 1M-line ingest takes about a minute, a chunk a few seconds) and be
# far shorter than Redis's default hour; the leases and the sweep below
# usually take the work up sooner.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("WORK_VISIBILITY_TIMEOUT", 600)}
CELERY_BROKER_CONNECTION_TIMEOUT = 2

# Work claims (reviewapp/core/work.py): a lease renewed every third of its
# length while a worker works; work whose lease ran out is taken up again,
# at most WORK_MAX_ATTEMPTS times (outages of the database or file store not
# counted), then failed with the reason. The sweep runs every
# WORK_SWEEP_SECONDS (by beat, or by a worker when beat has not run it for
# two intervals) and sends again what a dead worker held, and everything
# waiting when Redis lost its messages (reviewapp/core/broker.py); work
# handed to the broker and not started within WORK_STALE_SECONDS is sent
# again in any case, and can be tried again from its page. With these
# defaults a killed worker's work moves again within 45 s (lease, then the
# next sweep), a restarted broker's within 15 s of its return.
WORK_LEASE_SECONDS = env_int("WORK_LEASE_SECONDS", 30)
WORK_MAX_ATTEMPTS = env_int("WORK_MAX_ATTEMPTS", 3)
WORK_STALE_SECONDS = env_int("WORK_STALE_SECONDS", 300)
WORK_SWEEP_SECONDS = env_int("WORK_SWEEP_SECONDS", 15)
# An upload must not hang on a broker that is down: try briefly, then store
# the run as waiting; the sweep queues it when the broker is back.
WORK_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_BEAT_SCHEDULE = {
    "sweep-work": {"task": "reviewapp.tasks.sweep_work_task", "schedule": float(WORK_SWEEP_SECONDS)},
}

# Live progress of long tasks goes through the cache, because the rows being
# written are invisible to the web process until their transaction commits.
CACHE_URL = env("CACHE_URL", CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    # In-process tasks have no broker to connect to; their chatter is noise.
    "loggers": (
        {"kombu.connection": {"level": "ERROR"}, "celery.app.trace": {"level": "WARNING"}}
        if CELERY_TASK_ALWAYS_EAGER
        else {}
    ),
}

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(env("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
