"""Settings, all from the environment.

With nothing set the app runs for one person on a laptop: SQLite in the
project folder and Celery tasks run in-process. DATABASE_URL and
CELERY_BROKER_URL switch to PostgreSQL and real workers; DJANGO_ENV=production
turns on the deployment hardening that `manage.py check --deploy` asks for.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


PRODUCTION = env("DJANGO_ENV", "development") == "production"
DEBUG = env_bool("DJANGO_DEBUG", not PRODUCTION)

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
    "reviewapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any view reads the body, so an oversized upload is refused unread.
    "reviewapp.middleware.UploadLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
                "reviewapp.context.deployment",
                "reviewapp.context.roles",
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

LANGUAGE_CODE = "en"
TIME_ZONE = env("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
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

# Uploaded run logs are kept as evidence, by their sha256; web and workers
# must share this folder.
DATA_DIR = Path(env("REVIEWAPP_DATA_DIR", str(BASE_DIR / "var")))
MEDIA_ROOT = DATA_DIR / "media"
# Files above this size are refused before they are stored.
MAX_UPLOAD_BYTES = int(env("REVIEWAPP_MAX_UPLOAD_MB", "1024")) * 1024 * 1024

# Answers per scoring task: each running worker takes chunks of this size.
SCORING_CHUNK_ANSWERS = int(env("REVIEWAPP_SCORING_CHUNK", "20000"))
FILE_UPLOAD_TEMP_DIR = env("FILE_UPLOAD_TEMP_DIR") or None

# Celery: without a broker, tasks run in-process when they are queued.
CELERY_TASK_ALWAYS_EAGER = not env("CELERY_BROKER_URL")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", "memory://")
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", "reviewapp")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

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
