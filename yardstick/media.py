"""Dataset media, served only to those who may see each file.

A file under `media/datasets/<id>/` is served to a user who may browse that dataset (researchers,
admins), or who is being shown that exact file: a tester, for the files of a trial of theirs that
is open or just finished (not an item's other views, not another tester's
items). Everything else is a 404, whether or not the file exists, so that nothing can be learnt
by guessing names. Uploaded import files never live here (they wait in UPLOADS_ROOT).

Files are sent as downloads unless they are images, never sniffed, and under a sandboxing
Content-Security-Policy, so an HTML or SVG file in a dataset cannot run script on the app's
origin. With YARDSTICK_MEDIA_ACCEL_REDIRECT set, the app still decides who may read a file and a
front server (nginx: an `internal` location) sends the bytes. From an object store (settings
FILE_STORE "s3") the app streams the bytes it reads from the store, or, with
YARDSTICK_MEDIA_DELIVERY=signed, answers with a redirect to a signed address valid a few minutes.
"""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect
from django.utils.http import content_disposition_header

from accounts.inputs import file_name
from annotation.selectors import files_shown_to as files_worked_on
from benchmarks.selectors import datasets_for
from benchmarks.storage import is_local, media
from humantest.selectors import files_shown_to
from validation.selectors import files_shown_to as files_validated

DATASET_FILE = re.compile(r"datasets/(?P<dataset>\d+)/(?P<name>[^/\\]+)")
#: Images are shown in pages; anything else is only ever downloaded.
INLINE = re.compile(r"image/(png|jpeg|gif|webp|bmp|tiff)")


def may_read(user, dataset_id: int, name: str) -> bool:
    return (
        datasets_for(user).filter(pk=dataset_id).exists()
        or name in files_shown_to(user, dataset_id)
        or name in files_worked_on(user, dataset_id)
        or name in files_validated(user, dataset_id)
    )


@login_required
def serve_media(request, path: str):
    match = DATASET_FILE.fullmatch(path)
    if match is None or match["name"].startswith("."):
        raise Http404("no such file")
    dataset_id, name = int(match["dataset"]), match["name"]
    if not may_read(request.user, dataset_id, name):
        raise Http404("no such file")
    relative = f"datasets/{dataset_id}/{name}"
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    inline = bool(INLINE.fullmatch(content_type))
    sent_as = content_type if inline else "application/octet-stream"
    disposition = content_disposition_header(not inline, file_name(name))
    if is_local(media):
        location = Path(media.path(relative))
        if not location.is_file():
            raise Http404("no such file")
        if settings.MEDIA_ACCEL_REDIRECT:
            response = HttpResponse(content_type=sent_as)
            response["X-Accel-Redirect"] = settings.MEDIA_ACCEL_REDIRECT.rstrip("/") + "/" + relative
        else:
            response = FileResponse(location.open("rb"), content_type=sent_as)
    elif settings.MEDIA_DELIVERY == "signed":
        # The store sends the bytes, to whoever holds the address for its few minutes: the address
        # is made for this user only after the same check, and the redirect is not kept longer.
        if not media.exists(relative):
            raise Http404("no such file")
        url = media.url(
            relative,
            parameters={"ResponseContentType": sent_as, "ResponseContentDisposition": disposition},
            expire=settings.SIGNED_URL_SECONDS,
        )
        response = HttpResponseRedirect(url)
        response["Cache-Control"] = "private, no-store"
        response["Referrer-Policy"] = "no-referrer"
        return response
    else:
        try:
            size = media.size(relative)
        except FileNotFoundError:
            raise Http404("no such file") from None
        response = FileResponse(media.open(relative, "rb"), content_type=sent_as)
        response["Content-Length"] = str(size)
    response["Content-Disposition"] = disposition
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, max-age=3600"
    return response
