from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from accounts import inputs
from accounts.roles import ANNOTATOR, REVIEWER
from benchmarks.selectors import datasets_for
from validation.checks import check_for, validatable_benchmarks
from validation.models import Plan


class PlanForm(forms.Form):
    """A plan's choices; `services.create_plan`, which the view calls, checks the same rules."""

    name = forms.CharField(label=_("Name"), max_length=200, validators=[inputs.one_line])
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=None)
    sample_size = forms.IntegerField(
        label=_("Sample size"),
        required=False,
        min_value=1,
        max_value=inputs.INT32_BOUNDS["max_value"],
        help_text=_("How many items to check; or leave empty and give a margin."),
    )
    margin = forms.FloatField(
        label=_("Margin"),
        required=False,
        min_value=0.0001,
        max_value=0.5,
        help_text=_("Target margin of error, such as 0.01 for ±1 point: the size is computed from it."),
    )
    confidence = forms.FloatField(label=_("Confidence"), initial=0.95, min_value=0.5, max_value=0.999)
    strata = forms.MultipleChoiceField(
        label=_("Strata"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Stratify on these; every combination is a stratum."),
    )
    allocation = forms.ChoiceField(
        label=_("Allocation"), choices=Plan.Allocation.choices, initial=Plan.Allocation.PROPORTIONAL
    )
    seed = forms.IntegerField(label=_("Seed"), initial=0, **inputs.INT32_BOUNDS)
    overlap = forms.FloatField(
        label=_("Overlap"),
        initial=0.1,
        min_value=0,
        max_value=1,
        help_text=_("Share of the sample judged by several validators."),
    )
    validators_per_overlap = forms.TypedChoiceField(
        choices=[(2, "2"), (3, "3")], coerce=int, initial=2, label=_("Validators per overlap item")
    )
    lease_seconds = forms.IntegerField(
        initial=600, min_value=30, max_value=24 * 3600, label=_("Lease (seconds)")
    )
    validators = forms.ModelMultipleChoiceField(
        label=_("Validators"), queryset=None, widget=forms.CheckboxSelectMultiple
    )
    instructions = forms.CharField(
        label=_("Instructions"),
        required=False,
        max_length=20_000,
        validators=[inputs.valid_text],
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    # A plan over chosen items (the items every tester failed, sent from a test plan's results):
    # their ids, and where the list came from. Hidden: the page says what they are.
    items = forms.CharField(required=False, widget=forms.HiddenInput)
    source = forms.CharField(
        required=False, max_length=300, validators=[inputs.valid_text], widget=forms.HiddenInput
    )

    def clean_items(self) -> list[int] | None:
        text = self.cleaned_data.get("items", "").strip()
        if not text:
            return None
        try:
            return inputs.integers([part for part in text.split(",") if part.strip()], "items")
        except inputs.InputRefused:
            raise forms.ValidationError(_("the items are given by their ids, separated by commas")) from None

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        specs = validatable_benchmarks()
        self.fields["dataset"].queryset = datasets_for(user).filter(
            benchmark__in=[spec.name for spec in specs]
        )
        self.fields["strata"].choices = [
            (stratifier.key, f"{spec.title}: {stratifier.label}")
            for spec in specs
            for stratifier in check_for(spec.name).stratifiers
        ]
        users = get_user_model().objects.order_by("username")
        self.fields["validators"].queryset = users.filter(groups__name__in=[ANNOTATOR, REVIEWER]).distinct()
