"""Where uploaded import files wait for their job: outside the media folder, never served."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.utils.deconstruct import deconstructible


@deconstructible
class UploadStorage(FileSystemStorage):
    """Uploads under UPLOADS_ROOT (var/uploads by default), read by the import worker and removed
    when its job ends. No URL reaches them: an official file holds every answer."""

    @property
    def base_location(self):
        return settings.UPLOADS_ROOT

    @property
    def location(self):
        return os.path.abspath(self.base_location)

    @property
    def base_url(self):
        return None


uploads = UploadStorage()


def check_upload_size(upload) -> None:
    """Refuse an uploaded file larger than MAX_UPLOAD_BYTES (a form or serializer validator)."""
    from django.core.exceptions import ValidationError
    from django.utils.translation import gettext as _

    limit = settings.MAX_UPLOAD_BYTES
    if upload is not None and upload.size > limit:
        raise ValidationError(
            _(
                "the file is %(size)s MB, larger than the %(limit)s MB this server accepts "
                "(YARDSTICK_MAX_UPLOAD_MB)"
            )
            % {"size": f"{upload.size / 2**20:.1f}", "limit": f"{limit / 2**20:.0f}"}
        )


def files_removed_with_the_row(*fields: str):
    """A post_delete receiver that removes the files of `fields` once the row's deletion is
    committed: an upload waiting for a worker, deleted with its dataset, leaves nothing behind.
    Connect it with weak=False (it is a closure)."""
    from django.db import transaction

    def receiver(sender, instance, **kwargs):
        for name in fields:
            stored = getattr(instance, name, None)
            if stored and stored.name:
                transaction.on_commit(lambda storage=stored.storage, path=stored.name: storage.delete(path))

    return receiver
