"""Settings, read from the environment.

`WERKBANK_ENV=production` selects the production profile: SECRET_KEY and ALLOWED_HOSTS are then required,
DEBUG is off, and the result passes `manage.py check --deploy --fail-level WARNING`.
Anything else is the embedded profile used by `make demo` and the tests: SQLite under var/ unless
DATABASE_URL says otherwise, and Celery tasks run in-process unless REDIS_URL is set.
"""

from __future__ import annotations

import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONCE as _csp_nonce
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("WERKBANK_VAR_DIR", BASE_DIR / "var"))

ENV = os.environ.get("WERKBANK_ENV", "development")
PRODUCTION = ENV == "production"


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


if PRODUCTION:
    try:
        SECRET_KEY = os.environ["SECRET_KEY"]
    except KeyError:
        raise ImproperlyConfigured("SECRET_KEY is required when WERKBANK_ENV=production") from None
    ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS is required when WERKBANK_ENV=production")
    DEBUG = _env_bool("DEBUG", False)
    if DEBUG:
        raise ImproperlyConfigured("DEBUG must be off when WERKBANK_ENV=production")
    # Fernet keys that encrypt stored secrets (BMC credentials), newest first: see werkbank/secrets.py.
    WERKBANK_SECRETS_KEYS = _env_list("WERKBANK_SECRETS_KEYS")
    if not WERKBANK_SECRETS_KEYS:
        raise ImproperlyConfigured(
            "WERKBANK_SECRETS_KEYS is required when WERKBANK_ENV=production: one or more Fernet keys, "
            "comma-separated, newest first (README.md, Configuration, says how to make one)."
        )
else:
    # A fixed development key: the embedded profile never serves beyond 127.0.0.1.
    SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-werkbank-key-not-for-production-0123456789abcdef")
    ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS") or ["127.0.0.1", "localhost", "testserver"]
    DEBUG = _env_bool("DEBUG", True)
    # Without keys of its own, development derives one from SECRET_KEY (werkbank/secrets.py).
    WERKBANK_SECRETS_KEYS = _env_list("WERKBANK_SECRETS_KEYS")
# Ed25519 keys that sign the handover packs' manifests (base64 32-byte seeds), newest first: the first signs,
# all verify (warranty/signing.py). Production without one is a system check error; development derives one
# from SECRET_KEY.
WERKBANK_SIGNING_KEYS = _env_list("WERKBANK_SIGNING_KEYS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's assets as static files: /api/docs/ works offline
    "axes",  # login lockout (werkbank/security.py); before the core app, whose login audit reads its flag
    "csp",  # Content-Security-Policy header
    "import_export",  # CSV/XLSX export of the admin lists, previewed CSV import (werkbank/admin_io.py)
    "werkbank.apps.CoreConfig",
    "inventory",
    "orders",
    "builds",
    "burnin",
    "deployment",
    "warranty",
    "portal",
    "pm",
    "ops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: a member's organization language, unless the language switch chose one.
    "werkbank.i18n.OrganizationLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Inside the header middlewares, so that its 400 carries them: text the database cannot store (NUL,
    # unpaired surrogates) in the path, the query string or a body is a 400 naming the field.
    "werkbank.storable.StorableTextMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into its 429 answer
]

ROOT_URLCONF = "werkbank.urls"
WSGI_APPLICATION = "werkbank.wsgi.application"

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
                "django.template.context_processors.i18n",
                "werkbank.navigation.navigation",
            ],
        },
    },
]

if PRODUCTION and not os.environ.get("DATABASE_URL"):
    raise ImproperlyConfigured(
        "DATABASE_URL is required when WERKBANK_ENV=production (postgres://user:password@host:5432/name); "
        "the SQLite default is for the embedded profile only."
    )
# Production keeps each process's connection for a minute (a new PostgreSQL connection costs a few ms of
# every request otherwise) and checks it before reuse, so a connection the server dropped is replaced rather
# than failing the request. DB_CONN_MAX_AGE overrides the age in any profile (0 closes after each request).
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'werkbank.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60" if PRODUCTION else "0")),
        conn_health_checks=PRODUCTION,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # Concurrent writers wait for each other instead of failing with "database is locked": WAL lets readers
    # run beside the one writer; IMMEDIATE takes the write lock when a transaction begins, so a reader never
    # has to turn writer mid-transaction (which SQLite refuses at once); the busy timeout is the wait.
    # tests/werkbank/test_sqlite_concurrency.py proves 60 concurrent writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# axes' lockout check first, then the ordinary password check (werkbank/security.py).
AUTHENTICATION_BACKENDS = [
    "werkbank.security.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
TIME_ZONE = "Europe/Berlin"
USE_I18N = True
# One catalogue for every app and template (`make messages` updates it, `make venv` compiles it).
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "static"))
MEDIA_URL = "media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))

# One login for everyone (the admin's own refuses non-staff users); "/" then sends each role to its pages.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"

# --- Email -------------------------------------------------------------------------------------------
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if PRODUCTION
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = _env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "werkbank@localhost")
# Where customers reach this site: e-mail links (a portal order page, the warranty digest) start with it.
WERKBANK_PUBLIC_URL = os.environ.get("WERKBANK_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

# --- API ---------------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["werkbank.api.permissions.PMWritesOthersRead"],
    "DEFAULT_FILTER_BACKENDS": [
        "werkbank.api.filters.FilterBackend",  # a list refuses a parameter it does not take (400)
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "werkbank.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "werkbank.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "werkbank.api.exceptions.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
# Request limits (werkbank/api/parsers.py): bodies bounded in size, JSON in nesting; a throttle per token.
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = [
    "werkbank.api.parsers.JSONParser",
    "werkbank.api.parsers.FormParser",
    "werkbank.api.parsers.MultiPartParser",
]
REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] = ["werkbank.api.throttling.TokenRateThrottle"]
# Production answers JSON only; elsewhere the browsable API as well, whose forms show each action's own
# input (werkbank/api/renderers.py).
REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = [
    "rest_framework.renderers.JSONRenderer",
    *([] if PRODUCTION else ["werkbank.api.renderers.BrowsableAPIRenderer"]),
]

# Tokens are stored as a SHA-512 digest only; the raw value is shown once, at login.
# API_TOKEN_TTL_HOURS=0 issues tokens that do not expire.
_token_ttl_hours = int(os.environ.get("API_TOKEN_TTL_HOURS", "720"))
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=_token_ttl_hours) if _token_ttl_hours > 0 else None,
    "AUTO_REFRESH": False,
    # Live tokens per user; a login beyond it answers 409 (werkbank/api/auth.py).
    "TOKEN_LIMIT_PER_USER": int(os.environ.get("API_TOKENS_PER_USER", "10")),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Werkbank API",
    "DESCRIPTION": (
        "Build orders, procurement, assembly, burn-in and handover of GPU servers.\n\n"
        "Lists page with `limit` (default 50, at most 200) and `offset`, and answer the total in `count`. "
        "The big lists (components, stock movements, connectors, installations, allocations, servers) also "
        "take `cursor`: give it empty for the first page and follow `next`; such keyset pages keep one fixed "
        "order (id; for a server's rows: server, then position or time, then id; servers: order, then "
        "sequence), cost the same at any "
        "depth, carry no `count`, and refuse `ordering`. Each list's default order runs along an index of "
        "its own table; ties are broken by id."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Served from drf-spectacular-sidecar through staticfiles, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Every operation also documents its error answers (400/401/403/404/429, 409 for writes).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "werkbank.api.schema.document_errors",
    ],
    "ENUM_NAME_OVERRIDES": {
        "OrderStatusEnum": "orders.choices.OrderStatus",
        # One PO's status in two components (the list's PurchaseOrder and PurchaseOrderDetail, issue #29).
        "PurchaseOrderStatusEnum": "inventory.choices.PurchaseOrderStatus",
        # An attribution's proposed and current cause are one choice set (issue #29)...
        "FailureCauseEnum": "warranty.choices.FailureCause",
        # A warranty record's kind (server or component), in the records and in the PM's report.
        "WarrantyRecordKindEnum": "warranty.choices.RecordKind",
        # Every rendered-file job (handover packs, label batches) has the one status enum of
        # werkbank.choices, under the name it had before label batches came.
        "HandoverPackStatusEnum": "werkbank.choices.FileJobStatus",
        # A claim's status in the claim and in the shipped-replacement answer with its warnings (issue #28).
        "WarrantyClaimStatusEnum": "warranty.choices.ClaimStatus",
    },
}

# The API's areas, the tags of /api/docs/ in this order: an operation belongs to the area that names the first
# segment of its path under /api/v1/ (werkbank.api.schema). A route under a new segment adds it here.
WERKBANK_API_AREAS = {
    "auth": {"description": "Log in for an API token; revoke tokens.", "segments": ["auth"]},
    "organizations": {"description": "Customers and assembly partners.", "segments": ["organizations"]},
    "orders": {
        "description": "Server configurations, orders through their statuses, ROI assessments, workloads.",
        "segments": ["orders", "configurations", "roi-assessments"],
    },
    "inventory": {
        "description": "Parts, suppliers, purchase orders, receiving by lot, components, stock, labels.",
        "segments": ["inventory"],
    },
    "builds": {
        "description": "Servers and their assembly: connectors, allocation, installations, steps, photos.",
        "segments": ["builds"],
    },
    "burn-in": {
        "description": "Probe reports, runs, findings and waivers, telemetry, the burn-in gate.",
        "segments": ["burnin"],
    },
    "deployment": {
        "description": "Sites, racks, power feeds, placement, networks, platform listings, deploying.",
        "segments": [
            "deployment",
            "sites",
            "racks",
            "power-feeds",
            "placements",
            "networks",
            "prefixes",
            "platform-listings",
        ],
    },
    "handover": {"description": "Handing servers over, and their handover packs.", "segments": ["handover"]},
    "warranty": {
        "description": "Warranty records and registrations, claims, certificates, supplier returns.",
        "segments": ["warranty"],
    },
    "quality": {
        "description": "The fleet's quality by lot, supplier, part, position.",
        "segments": ["quality"],
    },
}
SPECTACULAR_SETTINGS["TAGS"] = [
    {"name": name, "description": area["description"]} for name, area in WERKBANK_API_AREAS.items()
]

# /api/schema/ and /api/docs/ answer 404 unless this is on: on in development, off in production.
WERKBANK_PUBLIC_API_DOCS = _env_bool("WERKBANK_PUBLIC_API_DOCS", not PRODUCTION)

# --- Login lockout (django-axes; werkbank/security.py) ----------------------------------------------------
# Failed logins are kept in the database, so the limits hold across all web processes without Redis.
# A username is locked only at the address that failed for it; an address only past a higher limit; a
# username alone only slows down the addresses that failed for it (the rules: werkbank/security.py).
AXES_HANDLER = "werkbank.security.LockoutHandler"
AXES_FAILURE_LIMIT = int(os.environ.get("WERKBANK_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("WERKBANK_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT = int(os.environ.get("WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT", "50"))
WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS = int(
    os.environ.get("WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS", "60")
)
AXES_RESET_ON_SUCCESS = True  # resets the successful (username, address) pair only
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # a refused attempt is not checked, so not counted
AXES_LOCKOUT_CALLABLE = "werkbank.security.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
AXES_DISABLE_ACCESS_LOG = True  # successful logins and logouts are AuditEvents (werkbank/auth_audit.py)
AXES_VERBOSE = False  # no start-up banner on every manage.py command; failures and lockouts still log
# X-Forwarded-For counts only behind this many proxies of our own (0: REMOTE_ADDR, the header ignored).
WERKBANK_TRUSTED_PROXY_COUNT = int(os.environ.get("WERKBANK_TRUSTED_PROXY_COUNT", "0"))
AXES_CLIENT_IP_CALLABLE = "werkbank.security.client_ip"

# --- Content-Security-Policy (django-csp 4) -------------------------------------------------------------
# Scripts and style sheets only from this site, or inline with the response's nonce (the pages' <style>
# blocks, Swagger UI's start script). Style attributes (the admin's, SVG widths) cannot run code and stay
# allowed. Nothing may frame the site, and forms post only to it.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", _csp_nonce],
        "style-src": ["'self'", _csp_nonce],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- Celery ------------------------------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
# Production without REDIS_URL would run every task in the web process (no retries, no beat): the check
# werkbank.E001 (werkbank/checks.py) refuses that unless this says it is meant.
WERKBANK_ALLOW_INPROCESS_TASKS = _env_bool("WERKBANK_ALLOW_INPROCESS_TASKS", False)
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
# At-least-once delivery (docs/reference/performance-reliability.md B1): ack after the task ran, give the
# message back when a worker dies, take one message at a time, and keep every task well inside the
# broker's visibility timeout. Tasks are idempotent by database constraint, so redelivery is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 1800
CELERY_TASK_SOFT_TIME_LIMIT = 1500
# A task whose pool process dies (SIGKILL, OOM) is requeued at once; one whose whole worker dies (lost host)
# goes back to the queue once the visibility timeout passes, when a worker starts or sweeps
# (tests/system/test_task_chaos.py proves both, with the timeout shortened).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", 3 * 3600))
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "werkbank")
CELERY_TIMEZONE = "UTC"
# Transactional outbox (werkbank/tasks.py): every minute, beat republishes the tasks whose publish after the
# commit was lost for two minutes, so a lost message runs within about three minutes.
WERKBANK_OUTBOX_SWEEP_EVERY_S = int(os.environ.get("WERKBANK_OUTBOX_SWEEP_EVERY_S", "60"))
WERKBANK_OUTBOX_RETRY_AFTER_S = int(os.environ.get("WERKBANK_OUTBOX_RETRY_AFTER_S", "120"))
WERKBANK_OUTBOX_KEEP_DAYS = 7
CELERY_BEAT_SCHEDULE = {
    "werkbank.outbox_sweep": {
        "task": "werkbank.tasks.outbox_sweep_task",
        "schedule": float(WERKBANK_OUTBOX_SWEEP_EVERY_S),
    },
    # Daily, early in the morning (TIME_ZONE): the warranty expiry digests (90 and 30 days ahead).
    "warranty.expiry_notify": {
        "task": "warranty.tasks.warranty_expiry_notify_task",
        "schedule": crontab(hour=6, minute=15),
    },
    # Weekly, Monday morning: the PMs' warranty digest (once a week: warranty.PmDigest's unique week).
    "warranty.pm_digest": {
        "task": "warranty.tasks.pm_digest_task",
        "schedule": crontab(hour=6, minute=30, day_of_week="mon"),
    },
    # Every half hour: read each customer's rental-platform account (deployment/tasks.py); a listing row is
    # appended only when a machine changed, and each alert is sent once (deployment.PlatformAlert).
    "deployment.platform_poll_all": {
        "task": "deployment.tasks.platform_poll_all_task",
        "schedule": float(os.environ.get("WERKBANK_PLATFORM_POLL_EVERY_S", "1800")),
    },
}

# --- Logging -----------------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # axes reports every successful login at INFO; the audit trail keeps those (werkbank/auth_audit.py).
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- Domain settings ---------------------------------------------------------------------------------
WERKBANK_PM_GROUP = "project-managers"
# Four eyes on approval (issue #24): the PM who submitted an order to ROI review may not approve it. On by
# default in production; off in development, where the demo has one PM.
WERKBANK_APPROVAL_FOUR_EYES = _env_bool("WERKBANK_APPROVAL_FOUR_EYES", PRODUCTION)
# The approval gate (orders.selectors.approval_checks): payback target, PSU headroom (of the usable DC
# power), and PSU efficiency (turns the DC load into wall power for the circuit check only).
WERKBANK_PAYBACK_TARGET_MONTHS = float(os.environ.get("WERKBANK_PAYBACK_TARGET_MONTHS", "36"))
WERKBANK_PSU_HEADROOM = float(os.environ.get("WERKBANK_PSU_HEADROOM", "0.9"))
WERKBANK_PSU_EFFICIENCY = float(os.environ.get("WERKBANK_PSU_EFFICIENCY", "0.94"))
# The fleet's quality flag (pm.quality, docs/reference/quality.md): a row is flagged when its 95 % Wilson
# interval's lower bound exceeds the threshold of its part category ("connector" for connector positions;
# else "default") and at least the minimum of units stands behind it. A position's units are servers, so its
# minimum is lower; at 4 (and 8) one failure alone never flags a row: 1 of 4 has a lower bound of 4.6 %.
# WERKBANK_QUALITY_FLAG_LOWER_BOUND="default=0.05,gpu=0.03,connector=0.05" overrides any of them.
WERKBANK_QUALITY_FLAG_LOWER_BOUND = {"default": 0.05, "gpu": 0.05, "connector": 0.05} | {
    key.strip(): float(value)
    for key, _, value in (
        item.partition("=") for item in _env_list("WERKBANK_QUALITY_FLAG_LOWER_BOUND") if "=" in item
    )
}
WERKBANK_QUALITY_MIN_UNITS = int(os.environ.get("WERKBANK_QUALITY_MIN_UNITS", "8"))
WERKBANK_QUALITY_MIN_UNITS_POSITION = int(os.environ.get("WERKBANK_QUALITY_MIN_UNITS_POSITION", "4"))
# Bench photos: decoded in full (JPEG or PNG; HEIC is refused), refused above this size, and re-encoded
# before they are stored (builds.services.steps.photo_check).
WERKBANK_MAX_PHOTO_BYTES = int(os.environ.get("WERKBANK_MAX_PHOTO_BYTES", str(10 * 1024 * 1024)))
# ...and above this many pixels (width × height), checked from the header before any pixel is decoded.
WERKBANK_MAX_PHOTO_PIXELS = int(os.environ.get("WERKBANK_MAX_PHOTO_PIXELS", str(50_000_000)))
# A warranty claim's attachments (warranty.services.attachments): photos as the bench's (above, WebP too),
# logs (plain text, gzip or ZIP, checked by their content) refused above this size; a compressed log is
# inflated only up to the second limit (an nvidia-bug-report.log.gz of 8 GPUs is a few MB, unpacked ~50 MB).
WERKBANK_MAX_CLAIM_LOG_BYTES = int(os.environ.get("WERKBANK_MAX_CLAIM_LOG_BYTES", str(20 * 1024 * 1024)))
WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES = int(
    os.environ.get("WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES", str(200 * 1024 * 1024))
)
# ...and at most this many files on one claim.
WERKBANK_MAX_CLAIM_ATTACHMENTS = int(os.environ.get("WERKBANK_MAX_CLAIM_ATTACHMENTS", "20"))
# Burn-in reports from the probe: refused above this size uncompressed (a 72 h run of 8 GPUs at 10 s is
# about 20 MB of JSON); a gzip body is inflated only up to it, so a zip bomb stops there.
WERKBANK_MAX_REPORT_BYTES = int(os.environ.get("WERKBANK_MAX_REPORT_BYTES", str(200 * 1000 * 1000)))
# A pack's ZIP uploaded to the public page /verify/: refused above this size, and when it unpacks to more
# than this plus twice the largest report (the raw report and the telemetry CSV drawn from it), so that a
# small ZIP cannot make the server inflate gigabytes. Anyone may post there: WERKBANK_VERIFY_RATE checks
# per client address (warranty/views.py).
WERKBANK_MAX_PACK_UPLOAD_BYTES = int(os.environ.get("WERKBANK_MAX_PACK_UPLOAD_BYTES", str(64 * 1024 * 1024)))
WERKBANK_VERIFY_RATE = os.environ.get("WERKBANK_VERIFY_RATE", "20/min")
# Health after the handover: a handed-over server whose newest field check started more than this many
# days ago (or that never had one) is listed as due on the PM's pipeline and its pages say so. The probe's
# sample timer runs weekly (probe/systemd/), so 30 days leaves room for a few missed weeks.
WERKBANK_FIELD_CHECK_MAX_AGE_DAYS = int(os.environ.get("WERKBANK_FIELD_CHECK_MAX_AGE_DAYS", "30"))

# --- Request limits ----------------------------------------------------------------------------------
# A request body (JSON, a form's fields) larger than this is refused: 413 from the API. Uploads say their
# own limit: photos WERKBANK_MAX_PHOTO_BYTES each, burn-in reports WERKBANK_MAX_REPORT_BYTES.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("WERKBANK_MAX_REQUEST_BYTES", str(1024 * 1024)))
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
DATA_UPLOAD_MAX_NUMBER_FILES = 20  # a build step takes at most 10 photos
# Requests per API token (a browser session: per user), e.g. "600/min"; empty: no limit. Past it: 429.
WERKBANK_API_RATE = os.environ.get("WERKBANK_API_RATE", "600/min")
# The throttle's counts: shared by every worker through Redis when there is one. Short timeouts: when Redis
# is unreachable the limiter fails open (werkbank/api/throttling.py), and a request must not wait long for it.
if "CACHES" not in globals():
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


def _shared_cache(prefix: str) -> dict[str, object]:
    """A cache every web process shares through Redis when there is one (short timeouts: its readers fail
    open when Redis is away), a process-local memory cache otherwise."""
    if REDIS_URL:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": prefix}


CACHES["throttle"] = _shared_cache("throttle")
# The fleet's quality tables (pm/quality/cache.py): computed once for every web process through Redis when
# there is one, and reused until what they count changes.
CACHES["quality"] = _shared_cache("quality")
# Rack power: a circuit's continuous limit is this share of V × A × phases (NEC's 80 % rule for loads of
# 3 h or more; a design convention in IEC countries).
WERKBANK_CIRCUIT_CONTINUOUS_FACTOR = float(os.environ.get("WERKBANK_CIRCUIT_CONTINUOUS_FACTOR", "0.8"))
# A rental platform's host minimums per GPU, checked before a server is listed there
# (deployment.minimums). Vast.ai publishes them in "Minimum Guidelines for Listing on Vast.ai"
# (https://docs.vast.ai/documentation/host/verification-stages, earlier
# https://vast.ai/docs/hosting/verification-stages): at least 1 physical CPU core (2 hyperthreads) per GPU,
# 4 GB of system RAM per GPU (the page prints "4GBM"), fast SSD storage with at least 128 GB per GPU.
# For PCIe the page gives no bandwidth, only "at least 1X PCIE for every 2.5 TFLOPS of GPU performance";
# the figure here is the one Vast.ai's open-source CLI checks a machine's measured `pcie_bw` against
# (vast-ai/vast-python, check_machine_requirements.py: "required > 2.85" GB/s, tested as <= 2.9 fails), so
# the conservative 2.9 GB/s per GPU. Override one figure with e.g.
# WERKBANK_PLATFORM_HOST_MINIMUMS="vast_ai.ram_gb_per_gpu=32,vast_ai.pcie_gbps_per_gpu=12".
WERKBANK_PLATFORM_HOST_MINIMUMS: dict[str, dict[str, float]] = {
    "vast_ai": {
        "cpu_cores_per_gpu": 1,
        "ram_gb_per_gpu": 4,
        "disk_gb_per_gpu": 128,
        "pcie_gbps_per_gpu": 2.9,
    },
}
for _item in _env_list("WERKBANK_PLATFORM_HOST_MINIMUMS"):
    _key, _value = _item.split("=", 1) if "=" in _item else (_item, "")
    _platform, _figure = _key.strip().split(".", 1) if "." in _key else (_key.strip(), "")
    if _figure.strip() and _value.strip():
        WERKBANK_PLATFORM_HOST_MINIMUMS.setdefault(_platform, {})[_figure.strip()] = float(_value)
# The rental platform poll (deployment/platforms/, issue #28): Vast.ai's host API, the timeout of one request,
# the reliability below which a machine's drop alerts the PM and the customer (seed 000 books the fleet by
# its 98.79 %, against a bar of about 98 %), the months of earnings read (the current one included), and the
# retries of an unreachable platform before the error is recorded on the account. Earnings in one currency
# are compared with a forecast in another at the operator's rate, "FROM/TO=rate" (1 FROM in TO; none by
# default: nothing is compared): Vast.ai pays out in USD, e.g. WERKBANK_EXCHANGE_RATES="USD/EUR=0.86".
WERKBANK_VASTAI_API_URL = os.environ.get("WERKBANK_VASTAI_API_URL", "https://console.vast.ai/api/v0")
WERKBANK_VASTAI_TIMEOUT_S = float(os.environ.get("WERKBANK_VASTAI_TIMEOUT_S", "20"))
WERKBANK_PLATFORM_RELIABILITY_MIN = Decimal(os.environ.get("WERKBANK_PLATFORM_RELIABILITY_MIN", "0.98"))
WERKBANK_PLATFORM_EARNINGS_MONTHS = int(os.environ.get("WERKBANK_PLATFORM_EARNINGS_MONTHS", "3"))
WERKBANK_PLATFORM_POLL_RETRIES = int(os.environ.get("WERKBANK_PLATFORM_POLL_RETRIES", "3"))
WERKBANK_EXCHANGE_RATES: dict[str, Decimal] = {
    _key.strip().upper(): Decimal(_value.strip())
    for _key, _, _value in (item.partition("=") for item in _env_list("WERKBANK_EXCHANGE_RATES"))
    if _value.strip()
}

# --- Production hardening ----------------------------------------------------------------------------
if PRODUCTION:
    SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SESSION_COOKIE_HTTPONLY = True
    X_FRAME_OPTIONS = "DENY"
    CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS")
    if _env_bool("BEHIND_TLS_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Production static files -------------------------------------------------------------------------
# Under gunicorn (Procfile, `make serve`) WhiteNoise serves what `collectstatic` put in STATIC_ROOT, with
# hashed names (cached for good) and compressed; tests/system/test_production_serving.py fetches one.
if PRODUCTION:
    MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                      "whitenoise.middleware.WhiteNoiseMiddleware")  # fmt: skip
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
