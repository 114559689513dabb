"""Reads from the catalog."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from benchmarks.models import Dataset, ImportJob, Item


def datasets_for(user: Any) -> QuerySet[Dataset]:
    """Datasets a user may browse: all of them for researchers and admins, none for others."""
    if user.has_perm("benchmarks.view_dataset"):
        return Dataset.objects.all()
    return Dataset.objects.none()


def import_jobs_for(user: Any) -> QuerySet[ImportJob]:
    """A researcher sees the import jobs they started; admins see all."""
    jobs = ImportJob.objects.select_related("dataset")
    return jobs if user.is_superuser else jobs.filter(created_by=user)


def dataset_items(dataset: Dataset) -> QuerySet[Item]:
    return dataset.items.order_by("position")


def item_neighbours(item: Item) -> dict[str, Any]:
    """The items before and after `item` in file order (None at either end), and where it stands:
    `number` (1-based) of `count`."""
    items = item.dataset.items.values("pk", "external_id")
    return {
        "previous": items.filter(position__lt=item.position).order_by("-position").first(),
        "next": items.filter(position__gt=item.position).order_by("position").first(),
        "number": item.dataset.items.filter(position__lt=item.position).count() + 1,
        "count": item.dataset.item_count,
    }


class DatasetNotFound(LookupError):
    """No dataset, or more than one, answers to a reference (the message says which)."""


def find_dataset(reference: str) -> Dataset:
    """The dataset with this id, or the only one with this name."""
    if reference.isdigit():
        dataset = Dataset.objects.filter(pk=int(reference)).first()
        if dataset is not None:
            return dataset
    matches = list(Dataset.objects.filter(name=reference))
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise DatasetNotFound(f"no dataset with id or name {reference!r} (see list_datasets)")
    ids = ", ".join(f"{dataset.pk} ({dataset})" for dataset in matches)
    raise DatasetNotFound(f"several datasets are named {reference!r}; give the id: {ids}")


def dataset_summary(dataset: Dataset) -> dict[str, Any]:
    """What the command line says of a dataset (`list_datasets`, `import_dataset --json`)."""
    return {
        "id": dataset.pk,
        "benchmark": dataset.benchmark,
        "name": dataset.name,
        "split": dataset.split,
        "version": dataset.version,
        "items": dataset.item_count,
        "units": dataset.unit_count,
        "scenes": dataset.scenes.count(),
        "images": dataset.has_media,
    }
