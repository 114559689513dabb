"""Web pages of the catalog, for researchers: browse, import, export."""

from __future__ import annotations

import dataclasses
import json

from django.contrib import messages
from django.contrib.auth.mixins import PermissionRequiredMixin
from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.generic import DetailView, FormView, ListView, View

from accounts.inputs import attachment
from benchmarks.forms import ImportForm
from benchmarks.models import Dataset, ImportJob
from benchmarks.selectors import dataset_items, datasets_for, import_jobs_for, item_neighbours
from benchmarks.services import ImportRefused, export_chunks, start_import_job
from benchmarks.spec import BenchmarkSpec, ItemSection, ItemTable


class DatasetListView(PermissionRequiredMixin, ListView):
    permission_required = "benchmarks.view_dataset"
    template_name = "benchmarks/dataset_list.html"
    context_object_name = "datasets"

    def get_queryset(self):
        return datasets_for(self.request.user)


class DatasetDetailView(PermissionRequiredMixin, DetailView):
    permission_required = "benchmarks.view_dataset"
    template_name = "benchmarks/dataset_detail.html"
    context_object_name = "dataset"

    def get_queryset(self):
        return datasets_for(self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = Paginator(dataset_items(self.object).select_related("scene"), 25).get_page(
            self.request.GET.get("page")
        )
        context["page"] = page
        context["items"] = [describe_item(self.object, item) for item in page]
        return context


class ItemDetailView(PermissionRequiredMixin, DetailView):
    permission_required = "benchmarks.view_item"
    template_name = "benchmarks/item_detail.html"
    context_object_name = "item"

    def get_object(self, queryset=None):
        dataset = get_object_or_404(datasets_for(self.request.user), pk=self.kwargs["pk"])
        return get_object_or_404(dataset.items.select_related("scene"), pk=self.kwargs["item_pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        item = self.object
        spec = item.dataset.spec
        context["dataset"] = item.dataset
        context["view"] = describe_item(item.dataset, item)
        scene = item.scene.data if item.scene_id else None
        context["regions"] = [region.as_dict() for region in spec.regions(item.ground_truth, scene)]
        # The spec's own SVG, built from validated enumerations only: nothing in it comes from free text.
        context["figure"] = mark_safe(spec.item_figure(item.payload, _))  # noqa: S308
        # A spec's own sections are in its words; the default ones label facts with the record's
        # field names, which are data and stay as they are.
        context["shown"] = translated(
            spec.shown_sections(item.payload, scene),
            labels=type(spec).shown_sections is not BenchmarkSpec.shown_sections,
        )
        context["truth"] = translated(
            spec.truth_sections(item.payload, item.ground_truth, scene),
            labels=type(spec).truth_sections is not BenchmarkSpec.truth_sections,
        )
        context["neighbours"] = item_neighbours(item)
        context["payload_text"] = json.dumps(item.payload, ensure_ascii=False, indent=2)
        context["ground_truth_text"] = json.dumps(item.ground_truth, ensure_ascii=False, indent=2)
        return context


def words(text: str) -> str:
    """A benchmark's word for its item page, in the reader's language ("" stays "": gettext of
    the empty string is the catalogue's header)."""
    return _(text) if text else text


def translated(sections: list[ItemSection], *, labels: bool = True) -> list[ItemSection]:
    """An item's sections with their spec's words (titles, column heads, notes and, with `labels`,
    the facts' labels: marked in the spec) translated; the item's own values stay as they are."""
    return [
        dataclasses.replace(
            section,
            title=words(section.title),
            facts=tuple((words(label) if labels else label, text) for label, text in section.facts),
            table=ItemTable(tuple(words(column) for column in section.table.columns), section.table.rows)
            if section.table
            else None,
            note=words(section.note),
        )
        for section in sections
    ]


def describe_item(dataset: Dataset, item) -> dict:
    """What a page shows of an item: its id, a one-line summary and its image URLs."""
    summary = dataset.spec.summary(item.payload, item.ground_truth)
    images = []
    if dataset.has_media:
        images = [(role, dataset.media_url(name)) for role, name in item.media.items()]
        if item.scene_id and item.scene.image:
            scene_url = dataset.media_url(item.scene.image)
            if all(url != scene_url for _, url in images):
                images.append(("scene", scene_url))
    return {"item": item, "summary": summary, "images": images}


class DatasetExportView(PermissionRequiredMixin, View):
    permission_required = "benchmarks.export_dataset"

    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        response = StreamingHttpResponse(export_chunks(dataset), content_type="application/json")
        file_name = dataset.spec.export_name(
            f"{dataset.benchmark}-{dataset.name}-{dataset.split or 'all'}-v{dataset.version}"
        )
        return attachment(response, file_name)


class ImportView(PermissionRequiredMixin, FormView):
    permission_required = "benchmarks.import_dataset"
    template_name = "benchmarks/import_form.html"
    form_class = ImportForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["jobs"] = import_jobs_for(self.request.user)[:10]
        return context

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            job = start_import_job(
                user=self.request.user,
                benchmark=data["benchmark"],
                name=data["name"],
                split=data["split"],
                version=data["version"],
                upload=data["file"],
                scenes_upload=data["scenes"],
                images_upload=data["images"],
            )
        except ImportRefused as error:
            form.add_error(None, str(error))
            return self.form_invalid(form)
        messages.info(self.request, _("Import of %(name)s queued.") % {"name": job.name})
        return redirect("benchmarks:import-job", pk=job.pk)


class ImportJobView(PermissionRequiredMixin, DetailView):
    permission_required = "benchmarks.view_importjob"
    template_name = "benchmarks/import_job.html"
    context_object_name = "job"

    def get_queryset(self):
        return import_jobs_for(self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["progress"] = self.object.progress()
        context["Status"] = ImportJob.Status
        return context
