from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from accounts.roles import ANNOTATOR, REVIEWER
from annotation.models import Project
from annotation.workflows import annotatable_benchmarks
from benchmarks.selectors import datasets_for


class ProjectForm(forms.ModelForm):
    """A project's choices; `services.create_project`, which the view calls, checks the same rules."""

    class Meta:
        model = Project
        fields = [
            "name",
            "dataset",
            "instructions",
            "pairs_per_item",
            "overlap",
            "lease_seconds",
            "seed",
            "annotators",
            "reviewers",
        ]
        widgets = {
            "instructions": forms.Textarea(attrs={"rows": 3}),
            "annotators": forms.CheckboxSelectMultiple,
            "reviewers": forms.CheckboxSelectMultiple,
        }
        labels = {
            "name": _("Name"),
            "dataset": _("Dataset"),
            "instructions": _("Instructions"),
            "pairs_per_item": _("QA pairs per image"),
            "overlap": _("Overlap"),
            "lease_seconds": _("Lease (seconds)"),
            "seed": _("Seed"),
            "annotators": _("Annotators"),
            "reviewers": _("Reviewers"),
        }
        help_texts = {
            "instructions": _("Shown to annotators on every task."),
            "pairs_per_item": _("Question-answer pairs wanted per image."),
            "overlap": _("Share of images (0 to 1) that a second annotator answers blind."),
            "lease_seconds": _("How long a task stays held without a sign of life from its page."),
            "seed": _("Chooses the images that get a second opinion."),
        }

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        names = [spec.name for spec in annotatable_benchmarks()]
        self.fields["dataset"].queryset = datasets_for(user).filter(benchmark__in=names, has_media=True)
        users = get_user_model().objects.order_by("username")
        self.fields["annotators"].queryset = users.filter(groups__name=ANNOTATOR)
        self.fields["reviewers"].queryset = users.filter(groups__name=REVIEWER)
        self.fields["annotators"].required = True
        self.fields["reviewers"].required = False
