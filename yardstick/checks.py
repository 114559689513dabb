"""`manage.py check --deploy`: configurations that cannot work once workers run on other hosts.

Registered from YardstickConfig.ready() with `deploy=True` (and the tag "yardstick"): they run under
`check --deploy` (yardstick-migrate runs it before every start of the web server, and stops on an
error), never on every `runserver`.

"Workers elsewhere" is what these checks guard: a Celery worker on another host than this one.
They know it two ways:

- declared: settings.WORKERS_ELSEWHERE (YARDSTICK_WORKERS_ELSEWHERE=1);
- observed: a WorkerBeat row written in the last OBSERVED_WITHIN by a worker whose host is not this
  one (socket.gethostname(), compared by the first label, case-insensitive, so "gpu1" and
  "gpu1.example.org" are one host). The database is read only when the check is given databases
  (`check --deploy --database default`), as Django's checks that touch a database are; an
  unreachable or unmigrated database skips the observed part and the checks go on with the flag.

What they cannot see: a worker that is set up but has not run yet (declare it), a shared folder that
is declared but not really shared (YARDSTICK_SHARED_FOLDERS is taken at its word), two hosts that
share a name.

- E101: a file-system Celery broker (CELERY_BROKER_URL=filesystem://): its queue is a folder of
  this host; a worker elsewhere never sees a task.
- E102: a file-based or local-memory cache: job heartbeats and progress pass through the cache, so a
  worker elsewhere beats where the web server never looks and its jobs are declared lost.
- E103: local file storage (no YARDSTICK_S3_BUCKET) not declared one shared mount: an import's
  images, uploads and checkpoints are written where the other hosts cannot read them.
- E104: DEBUG on while ALLOWED_HOSTS names a host other than the loopback names: the error pages
  would show settings and code to whoever reaches the site.
- E105: YARDSTICK_MEDIA_DELIVERY unknown, or "signed" with local files. An error, not a warning: in
  both cases the setting asks for something the app cannot do (a misspelt mode; a signed URL with no
  object store to sign it), and a site should not start serving media otherwise than its
  administrator wrote. The fix is one variable.
"""

from __future__ import annotations

import ipaddress
import socket
from datetime import timedelta

from django.conf import settings
from django.core.checks import Error

#: A worker heard from within this long counts as running.
OBSERVED_WITHIN = timedelta(minutes=10)
LOCAL_CACHES = (
    "django.core.cache.backends.filebased.FileBasedCache",
    "django.core.cache.backends.locmem.LocMemCache",
)
#: ALLOWED_HOSTS entries that only this machine reaches (any other loopback address is one too).
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]", "testserver"}
MEDIA_DELIVERIES = ("stream", "signed")


def short_host(name: str) -> str:
    return name.split(".", 1)[0].lower()


def workers_seen_elsewhere(databases) -> list[str]:
    """The names of workers on other hosts heard from within OBSERVED_WITHIN, in the databases the
    check was given (none given: none read). An unreachable or unmigrated database gives none."""
    if not databases:
        return []
    from django.db import DatabaseError, router
    from django.utils import timezone

    from jobs.models import WorkerBeat

    alias = router.db_for_read(WorkerBeat)
    if alias not in databases:
        return []
    here = short_host(socket.gethostname())
    since = timezone.now() - OBSERVED_WITHIN
    try:
        names = list(
            WorkerBeat.objects.using(alias).filter(beat_at__gte=since).values_list("name", flat=True)
        )
    except DatabaseError:
        return []
    # A worker's name is Celery's name@host; a name without "@" is its host.
    return [name for name in names if short_host(name.rpartition("@")[2]) != here]


def workers_elsewhere(databases) -> str:
    """Why workers are taken to run on other hosts, for a message; empty when they are not."""
    if settings.WORKERS_ELSEWHERE:
        return "workers run on other hosts (YARDSTICK_WORKERS_ELSEWHERE is on)"
    seen = workers_seen_elsewhere(databases)
    if seen:
        return f"workers run on other hosts ({', '.join(sorted(seen))} heard from in the last {OBSERVED_WITHIN.total_seconds() / 60:g} minutes)"
    return ""


def unless(reason: str) -> str:
    if "YARDSTICK_WORKERS_ELSEWHERE" in reason:
        return " If every worker runs on this host, unset YARDSTICK_WORKERS_ELSEWHERE."
    return ""


def check_broker(app_configs=None, databases=None, **kwargs):
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("filesystem://"):
        return []
    reason = workers_elsewhere(databases)
    if not reason:
        return []
    return [
        Error(
            f"CELERY_BROKER_URL is {broker!r} (a folder of this host) but {reason}: they never see its tasks.",
            hint="Set CELERY_BROKER_URL to a broker every host reaches, the same on every host "
            "(redis://host:6379/0, as deploy/env/*.env do)." + unless(reason),
            id="yardstick.E101",
        )
    ]


def check_cache(app_configs=None, databases=None, **kwargs):
    cache = settings.CACHES.get("default", {})
    backend = cache.get("BACKEND", "")
    if backend not in LOCAL_CACHES:
        return []
    reason = workers_elsewhere(databases)
    if not reason:
        return []
    return [
        Error(
            f"CACHES['default']['BACKEND'] is {backend!r} (this host's own) but {reason}: job "
            "heartbeats and progress pass through the cache, so their jobs would show no progress and "
            "be declared lost.",
            hint="Set CACHE_URL to a Redis every host reaches, the same on every host "
            "(redis://host:6379/1, as deploy/env/*.env do)." + unless(reason),
            id="yardstick.E102",
        )
    ]


def check_file_store(app_configs=None, databases=None, **kwargs):
    if settings.FILE_STORE != "local" or settings.SHARED_FOLDERS:
        return []
    reason = workers_elsewhere(databases)
    if not reason:
        return []
    return [
        Error(
            f"FILE_STORE is 'local' (MEDIA_ROOT, UPLOADS_ROOT and CHECKPOINT_DIR are folders of this "
            f"host, YARDSTICK_SHARED_FOLDERS is off) but {reason}: they cannot read the files the web "
            "server writes, nor it theirs.",
            hint="Set YARDSTICK_S3_BUCKET (with YARDSTICK_S3_ENDPOINT_URL, YARDSTICK_S3_ACCESS_KEY_ID and "
            "YARDSTICK_S3_SECRET_ACCESS_KEY unless boto3 finds them) on every host; or mount one shared "
            "folder for MEDIA_ROOT, YARDSTICK_UPLOADS_ROOT and YARDSTICK_CHECKPOINT_DIR on every host and "
            "set YARDSTICK_SHARED_FOLDERS=1." + unless(reason),
            id="yardstick.E103",
        )
    ]


def is_public(host: str) -> bool:
    """Whether an ALLOWED_HOSTS entry lets requests for a name other than this machine's in."""
    if host == "*" or host.startswith("."):
        return True
    if host in LOOPBACK_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True  # a domain name


def check_debug(app_configs=None, databases=None, **kwargs):
    if not settings.DEBUG:
        return []
    public = [host for host in settings.ALLOWED_HOSTS if host and is_public(host)]
    if not public:
        return []
    return [
        Error(
            f"DEBUG is on while ALLOWED_HOSTS names {', '.join(public)}: anyone reaching the site "
            "by that name would see the settings and the code in an error page.",
            hint="Unset DJANGO_DEBUG (never on a shared site); for development keep DJANGO_ALLOWED_HOSTS "
            "to localhost, 127.0.0.1 and ::1.",
            id="yardstick.E104",
        )
    ]


def check_media_delivery(app_configs=None, databases=None, **kwargs):
    delivery = settings.MEDIA_DELIVERY
    if delivery not in MEDIA_DELIVERIES:
        return [
            Error(
                f"MEDIA_DELIVERY is {delivery!r}: it must be 'stream' or 'signed'.",
                hint="Set YARDSTICK_MEDIA_DELIVERY=stream (the app sends the files; the default) or "
                "YARDSTICK_MEDIA_DELIVERY=signed (a redirect to the object store; needs YARDSTICK_S3_BUCKET).",
                id="yardstick.E105",
            )
        ]
    if delivery == "signed" and settings.FILE_STORE == "local":
        return [
            Error(
                "MEDIA_DELIVERY is 'signed' but FILE_STORE is 'local': only an object store signs URLs.",
                hint="Set YARDSTICK_S3_BUCKET (files in an object store), or YARDSTICK_MEDIA_DELIVERY=stream "
                "(with YARDSTICK_MEDIA_ACCEL_REDIRECT for nginx to send local files).",
                id="yardstick.E105",
            )
        ]
    return []


CHECKS = (check_broker, check_cache, check_file_store, check_debug, check_media_delivery)
