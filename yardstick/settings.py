"""Settings for every deployment, read from the environment.

With no variables set, Yardstick runs embedded: SQLite in var/, uploaded and generated media
in var/media, and a Celery broker on the local file system. Production and the PostgreSQL test
run set DATABASE_URL (and CELERY_BROKER_URL for Redis); nothing else changes.

DEBUG is off unless DJANGO_DEBUG asks for it (`make run` does). With DEBUG off the settings are
those of a production site: HTTPS only (redirect, HSTS, secure cookies); variables relax them
where a proxy terminates TLS or a site runs on plain HTTP on purpose (docs/admin.md).
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from kombu import Queue

from benchmarks.registry import PLUGIN_ROOT, plugin_folders

BASE_DIR = Path(__file__).resolve().parent.parent
if os.environ.get("PYTEST_VERSION") and not os.environ.get("YARDSTICK_VAR_DIR"):
    # A test run (pytest sets PYTEST_VERSION) keeps its own var/ folder, removed at its end: a
    # `make run` beside it never takes the tests' tasks from var/celery, nor they its files. The
    # processes the tests start inherit the variable, and with it the same folder.
    import atexit
    import shutil
    import tempfile

    os.environ["YARDSTICK_VAR_DIR"] = tempfile.mkdtemp(prefix="yardstick-test-var-")
    _TEST_VAR_OWNER = os.getpid()

    def remove_test_var(folder=os.environ["YARDSTICK_VAR_DIR"]):
        if os.getpid() == _TEST_VAR_OWNER:  # not in a forked child that happens to run the exit handlers
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove_test_var)
VAR_DIR = Path(os.environ.get("YARDSTICK_VAR_DIR", BASE_DIR / "var"))


def env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def secret_key() -> str:
    """DJANGO_SECRET_KEY, or a random key kept in var/secret_key (made on first use, owner-only),
    which the web process and the workers sharing var/ all read."""
    key = os.environ.get("DJANGO_SECRET_KEY", "")
    if key:
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        import secrets

        VAR_DIR.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".secret_key.{os.getpid()}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            stream.write(secrets.token_urlsafe(50))
        try:
            os.link(draft, path)  # atomic: of processes starting together, the first key wins
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


DEBUG = env_flag("DJANGO_DEBUG", False)
SECRET_KEY = secret_key()
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
CSRF_TRUSTED_ORIGINS = [
    origin for origin in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if origin
]

# HTTPS. Secure by default once DEBUG is off; each variable only relaxes.
SECURE_SSL_REDIRECT = env_flag("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
# Probes and scrapers that talk to gunicorn directly, on the host, get their answer, not a redirect.
SECURE_REDIRECT_EXEMPT = [r"^health/", r"^metrics$"]
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_flag("DJANGO_SECURE_HSTS_PRELOAD", not DEBUG)
SESSION_COOKIE_SECURE = env_flag("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_flag("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
# Behind a proxy that terminates TLS: DJANGO_SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO (its
# value must then be "https"). Set it only when the proxy always sets or strips that header.
if os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (os.environ["DJANGO_SECURE_PROXY_SSL_HEADER"], "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy: every script the pages run is a file of the app's own (no inline script,
# no inline event handler, no eval), so a page that showed injected markup still runs none of it.
# Inline styles stay allowed: matplotlib's SVG plots are styled by attributes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "accounts",
    "jobs",
    "yardstick",
    "benchmarks",
    "annotation",
    "humantest",
    "evaluation",
    "inference",
    "validation",
    # Each benchmark's folder (and the scene engine two of them share), found, never listed.
    *(f"{PLUGIN_ROOT}.{folder.name}" for folder in plugin_folders()),
]

MIDDLEWARE = [
    # First: the request's whole time in Django, for /metrics.
    "yardstick.metrics.RequestMetrics",
    # A request id (X-Request-ID, kept from nginx or made) on every log line of the request.
    "yardstick.logs.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserLanguageMiddleware",
    # A study's participant (logged in by an entry link) opens that study's pages and nothing else.
    "humantest.middleware.ParticipantConfinement",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last: turns a locked-out log-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "yardstick.urls"
WSGI_APPLICATION = "yardstick.wsgi.application"

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
                "accounts.roles.roles_context",
                "accounts.views.login_context",
            ],
        },
    },
]

# Database: SQLite by default; DATABASE_URL (postgres://...) switches to PostgreSQL.
if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(VAR_DIR / "yardstick.sqlite3")),
            "OPTIONS": {
                # The web process and the worker write to the same file: WAL lets readers go
                # on while one writes, and IMMEDIATE transactions wait for the lock instead of
                # failing half-way.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
            "TEST": {"NAME": os.environ.get("SQLITE_TEST_PATH") or None},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Failed log-ins (the form and the API token endpoint) are counted per username and address; after
# YARDSTICK_LOGIN_FAILURES in a row that pair is locked for YARDSTICK_LOGIN_LOCKOUT_MINUTES.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("YARDSTICK_LOGIN_FAILURES", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("YARDSTICK_LOGIN_LOCKOUT_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Behind a reverse proxy, the client's address is in a header the proxy sets (docs/admin.md).
if os.environ.get("YARDSTICK_CLIENT_IP_HEADER"):
    AXES_IPWARE_META_PRECEDENCE_ORDER = [os.environ["YARDSTICK_CLIENT_IP_HEADER"], "REMOTE_ADDR"]

# Mail: configured from the environment, or none (then password reset says to ask an admin).
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
PASSWORD_RESET_BY_EMAIL = bool(EMAIL_HOST)
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_flag("EMAIL_USE_TLS", True)
    DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", f"yardstick@{EMAIL_HOST}")
    SERVER_EMAIL = DEFAULT_FROM_EMAIL

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The annotators' and reviewers' pages in English and Simplified Chinese (compiled catalogues in
# locale/, made by `make messages`); each person chooses in the page header.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    # npm packages pinned in package.json (`make` runs `npm ci`), served as ES modules.
    ("vendor/sortablejs", BASE_DIR / "node_modules" / "sortablejs" / "modular"),
    ("vendor/konva", BASE_DIR / "node_modules" / "konva"),
]
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise serves from here after collectstatic
MEDIA_URL = "media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
# Dataset media is served by the app, to the users who may see each file (yardstick/media.py).
# A front server can send the bytes instead: YARDSTICK_MEDIA_ACCEL_REDIRECT=/protected-media/
# makes the app answer with X-Accel-Redirect to that internal location (docs/admin.md).
MEDIA_ACCEL_REDIRECT = os.environ.get("YARDSTICK_MEDIA_ACCEL_REDIRECT", "")
# Uploaded import files wait here for their job, outside the media folder; removed when it ends.
UPLOADS_ROOT = Path(os.environ.get("YARDSTICK_UPLOADS_ROOT", VAR_DIR / "uploads"))
# The largest upload accepted (each file), and the most a zip of images may unpack to.
MAX_UPLOAD_BYTES = int(os.environ.get("YARDSTICK_MAX_UPLOAD_MB", "1024")) * 1024 * 1024
MAX_UNPACKED_IMAGES_BYTES = int(os.environ.get("YARDSTICK_MAX_IMAGES_MB", "8192")) * 1024 * 1024
# Where files are kept (docs/production.md, "Files in object storage"). By default three folders on
# this machine: dataset media (MEDIA_ROOT), uploads (UPLOADS_ROOT: import files, prediction files,
# model runs' outputs) and checkpoints (CHECKPOINT_DIR, below). With YARDSTICK_S3_BUCKET set, all
# three live in that bucket of an S3-compatible store, under media/, uploads/ and checkpoints/ (after
# YARDSTICK_S3_PREFIX), and every host (web, workers) needs only these settings to reach them.
S3_BUCKET = os.environ.get("YARDSTICK_S3_BUCKET", "")
FILE_STORE = "s3" if S3_BUCKET else "local"
# Datasets' media from the store reach browsers through the app ("stream": the app checks who may
# see the file and sends its bytes) or by a redirect to a signed URL valid SIGNED_URL_SECONDS
# ("signed": the store sends the bytes; its address is added to the pages' img-src).
MEDIA_DELIVERY = os.environ.get("YARDSTICK_MEDIA_DELIVERY", "stream")
SIGNED_URL_SECONDS = int(os.environ.get("YARDSTICK_SIGNED_URL_SECONDS", "300"))
# Where a worker keeps its copies of stored files it reads by path (a run's images, a checkpoint,
# an archive of images being imported). Only a cache: local to each host, safe to empty.
FILE_CACHE_DIR = Path(os.environ.get("YARDSTICK_FILE_CACHE_DIR", str(VAR_DIR / "file-cache")))
# Workers run on other hosts than the web server (the env files of deploy/ say so): `check --deploy`
# then refuses what cannot work across hosts (a file-system broker or cache, local files that are
# not one shared folder). YARDSTICK_SHARED_FOLDERS=1 says MEDIA_ROOT, UPLOADS_ROOT and CHECKPOINT_DIR
# are one shared mount (NFS) on every host, the way before object storage.
WORKERS_ELSEWHERE = env_flag("YARDSTICK_WORKERS_ELSEWHERE", False)
SHARED_FOLDERS = env_flag("YARDSTICK_SHARED_FOLDERS", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "media": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "uploads": {"BACKEND": "benchmarks.storage.UploadStorage"},
    "checkpoints": {"BACKEND": "benchmarks.storage.CheckpointStorage"},
}


def object_store(bucket: str, *, prefix: str = "", signed_url_seconds: int = 300, **connection) -> dict:
    """STORAGES entries putting media, uploads and checkpoints in one bucket of an S3-compatible
    store, under media/, uploads/ and checkpoints/ after `prefix`. `connection`: django-storages'
    S3 options (endpoint_url, region_name, access_key, secret_key, addressing_style); empty ones
    are left to boto3 (AWS_* variables, an instance role)."""
    common = {
        "bucket_name": bucket,
        **{name: value for name, value in connection.items() if value},
        "signature_version": "s3v4",
        "default_acl": None,
        "querystring_auth": True,
        "querystring_expire": signed_url_seconds,
    }
    prefix = prefix.strip("/")
    return {
        alias: {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                **common,
                "location": f"{prefix}/{alias}" if prefix else alias,
                # Media and checkpoints keep their names (a dataset's files are named by its
                # records); uploads get a fresh name when one is taken.
                "file_overwrite": alias != "uploads",
            },
        }
        for alias in ("media", "uploads", "checkpoints")
    }


if FILE_STORE == "s3":
    S3_ENDPOINT_URL = os.environ.get("YARDSTICK_S3_ENDPOINT_URL", "")
    STORAGES.update(
        object_store(
            S3_BUCKET,
            prefix=os.environ.get("YARDSTICK_S3_PREFIX", ""),
            signed_url_seconds=SIGNED_URL_SECONDS,
            endpoint_url=S3_ENDPOINT_URL,
            region_name=os.environ.get("YARDSTICK_S3_REGION", ""),
            access_key=os.environ.get("YARDSTICK_S3_ACCESS_KEY_ID", ""),
            secret_key=os.environ.get("YARDSTICK_S3_SECRET_ACCESS_KEY", ""),
            addressing_style=os.environ.get("YARDSTICK_S3_ADDRESSING_STYLE", ""),
        )
    )
    if MEDIA_DELIVERY == "signed" and S3_ENDPOINT_URL:
        CONTENT_SECURITY_POLICY["DIRECTIVES"]["img-src"].append(S3_ENDPOINT_URL)
FILE_UPLOAD_TEMP_DIR = None
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies pass the input gate (accounts/inputs.py): deep, non-finite or non-Unicode ones are a 400.
    "DEFAULT_PARSER_CLASSES": [
        "accounts.parsers.GatedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_RATES": {"login": os.environ.get("YARDSTICK_TOKEN_RATE", "10/minute")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Yardstick API",
    "DESCRIPTION": "Datasets, items, imports and exports of visual-reasoning benchmarks.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema names every endpoint and field: for signed-in users only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: a broker that needs no server unless CELERY_BROKER_URL names one.
CELERY_QUEUE_DIR = VAR_DIR / "celery"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for folder in ("queue", "processed", "control"):
        (CELERY_QUEUE_DIR / folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_QUEUE_DIR / "queue"),
        "data_folder_out": str(CELERY_QUEUE_DIR / "queue"),
        "processed_folder": str(CELERY_QUEUE_DIR / "processed"),
        # Broadcast (pidbox) exchanges; Kombu's default is ./control, inside the working tree.
        "control_folder": str(CELERY_QUEUE_DIR / "control"),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
# Imports have a queue of their own, so that a busy human test's summaries never keep an import
# waiting (a worker started without -Q takes both; `-Q imports` makes an import-only worker).
# Model runs go to "gpu": a worker on a GPU machine consumes it alone (`celery worker -Q gpu`); the
# embedded worker of `make run` consumes every queue and runs them on the CPU.
CELERY_TASK_QUEUES = [Queue("celery"), Queue("imports"), Queue("gpu")]
CELERY_TASK_ROUTES = {"benchmarks.run_import": {"queue": "imports"}, "inference.run_model": {"queue": "gpu"}}
# The reaper of jobs whose worker died (jobs.services.declare_lost_jobs) runs when a worker starts
# and on this schedule, sent by Celery beat: `make run`'s worker embeds it (-B); a deployment runs
# one `celery -A yardstick beat` (docs/admin.md). Pages never reap: they only read.
JOB_REAP_EVERY_S = float(os.environ.get("YARDSTICK_JOB_REAP_EVERY_S", "30"))
CELERY_BEAT_SCHEDULE = {"declare-lost-jobs": {"task": "jobs.declare_lost", "schedule": JOB_REAP_EVERY_S}}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Processes that read and decode images for a learned baseline's batches (0: the run's own process).
INFERENCE_LOADER_WORKERS = int(os.environ.get("YARDSTICK_INFERENCE_LOADER_WORKERS", "0"))
# Where image models keep their inputs decoded and resized, one file per dataset and image size,
# so a second run reads them instead of decoding them again (docs/inference.md, "Throughput").
INFERENCE_CACHE_DIR = Path(os.environ.get("YARDSTICK_INFERENCE_CACHE_DIR", str(VAR_DIR / "inference-cache")))
# The most model runs one person may have queued or running at once (0: no limit), and the most
# imports, and uploads being scored by a worker, each (the queues are shared).
MODEL_RUNS_PER_PERSON = int(os.environ.get("YARDSTICK_MODEL_RUNS_PER_PERSON", "4"))
JOBS_PER_PERSON = int(os.environ.get("YARDSTICK_JOBS_PER_PERSON", "4"))
# Where checkpoints people can choose on the run form live (files named *.pt), besides the shipped ones.
CHECKPOINT_DIR = Path(os.environ.get("YARDSTICK_CHECKPOINT_DIR", str(VAR_DIR / "checkpoints")))
# /metrics (Prometheus): readable with this bearer token, or (empty) only from the machine itself.
METRICS_TOKEN = os.environ.get("YARDSTICK_METRICS_TOKEN", "")
# Model plug-ins (docs/models.md): besides installed packages' `yardstick.models` entry points,
# "module:Class" paths (comma-separated) importable from MODELS_DIR. Web and workers must agree.
MODELS_DIR = Path(os.environ.get("YARDSTICK_MODELS_DIR", str(VAR_DIR / "models")))
MODELS = [path.strip() for path in os.environ.get("YARDSTICK_MODELS", "").split(",") if path.strip()]
# Served models (docs/inference.md): the first wait before a failed request is sent again (doubled
# at each retry, up to 30 s, with a jitter from the run's seed), and the longest Retry-After obeyed.
SERVED_BACKOFF_S = float(os.environ.get("YARDSTICK_SERVED_BACKOFF_S", "1"))
# The hosts a served run may send items to (comma-separated: names, *.domains, addresses, networks
# such as 10.0.0.0/8); empty: any host. Link-local addresses (cloud metadata) never.
SERVED_ALLOWED_HOSTS = [
    host.strip() for host in os.environ.get("YARDSTICK_SERVED_ALLOWED_HOSTS", "").split(",") if host.strip()
]
SERVED_RETRY_AFTER_MAX_S = float(os.environ.get("YARDSTICK_SERVED_RETRY_AFTER_MAX_S", "60"))
# A running job's worker beats every JOB_HEARTBEAT_S; a job without a beat for JOB_LOST_AFTER_S
# is declared failed (its worker was killed) by the reaper, at a worker's start and every
# JOB_REAP_EVERY_S.
JOB_HEARTBEAT_S = float(os.environ.get("YARDSTICK_JOB_HEARTBEAT_S", "10"))
JOB_LOST_AFTER_S = float(os.environ.get("YARDSTICK_JOB_LOST_AFTER_S", "120"))
# A prediction file uploaded on the report page to a dataset of more scoring units than this is
# scored by a worker, with a progress bar; smaller ones are scored while the request waits.
SCORE_IN_REQUEST_UNITS = int(os.environ.get("YARDSTICK_SCORE_IN_REQUEST_UNITS", "20000"))
# Seconds one annotation submit may spend reading its evidence with OCR (0: never in a request).
ANNOTATION_OCR_BUDGET_S = float(os.environ.get("YARDSTICK_OCR_BUDGET_S", "4"))
# Lapsed annotation leases are looked for at most this often per project (each claim asks).
ANNOTATION_EXPIRY_EVERY_S = float(os.environ.get("YARDSTICK_EXPIRY_EVERY_S", "1"))
CELERY_TASK_ALWAYS_EAGER = env_flag("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# "json": every log line one JSON object (time, level, logger, message, host, process, and the
# request's id, method, path and user or the task's name, id and job: yardstick/logs.py), for a log
# collector; "text": the message alone.
LOG_FORMAT = os.environ.get("YARDSTICK_LOG_FORMAT", "text").strip().lower()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "yardstick.logs.ContextFilter"}},
    "formatters": {"json": {"()": "yardstick.logs.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["context"],
            **({"formatter": "json"} if LOG_FORMAT == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # A served model's every request is in its run's audit file: the worker's log needs no line each.
    "loggers": {"httpx": {"level": "WARNING"}},
}

# The cache carries progress of long jobs between the worker and the web process, so it must
# be shared by both: a folder on one machine by default, Redis when CACHE_URL names it.
if os.environ.get("CACHE_URL", "").startswith("redis://"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["CACHE_URL"],
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": os.environ.get("CACHE_DIR", str(VAR_DIR / "cache")),
        }
    }
