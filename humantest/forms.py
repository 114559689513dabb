from __future__ import annotations

import re

from django import forms
from django.contrib.auth import get_user_model

from accounts.roles import TESTER
from benchmarks import registry
from benchmarks.selectors import datasets_for
from humantest import plans
from humantest.models import PLAN_CHOICES, TestPlan
from humantest.trials import trial_for


def setting_choices() -> list[tuple[str, str]]:
    """Every benchmark's settings, labelled with the benchmark (the dataset decides which apply)."""
    choices = [("", "–")]
    for spec in registry.specs():
        if spec.trial:
            offered = trial_for(spec.name).offers
            choices += [
                (c.value, f"{spec.title} {c.label}") for c in spec.settings if c.value and offered(c.value)
            ]
    return choices


def balance_choices() -> list[tuple[str, str]]:
    fields = {
        (name, field.label)
        for spec in registry.specs()
        if spec.trial
        for name, field in trial_for(spec.name).balance_fields.items()
    }
    return [("", "No balancing"), *sorted(fields)]


class IdListField(forms.CharField):
    """External ids separated by commas, spaces or new lines."""

    widget = forms.Textarea(attrs={"rows": 2})

    def to_python(self, value):
        text = super().to_python(value) or ""
        return [part for part in re.split(r"[\s,]+", text) if part]

    def prepare_value(self, value):
        return ", ".join(value) if isinstance(value, list) else value


class TestPlanForm(forms.ModelForm):
    """A plan's choices. `clean` names every broken plan rule beside its field, together with the
    fields' own errors; `plans.create_test_plan`, which the view calls, keeps the same rules."""

    setting = forms.ChoiceField(choices=setting_choices, required=False)
    balance_by = forms.ChoiceField(choices=balance_choices, required=False)
    practice_items = IdListField(
        required=False, help_text="Item ids shown as practice, with the answer after each."
    )
    fixed_items = IdListField(
        required=False, help_text="For a fixed draw: the item ids every tester gets, in order."
    )

    class Meta:
        model = TestPlan
        fields = list(PLAN_CHOICES)
        labels = {"time_limit_s": "Time limit (seconds)", "items_per_tester": "Items per tester"}
        widgets = {
            "testers": forms.CheckboxSelectMultiple,
            "brief": forms.Textarea(attrs={"rows": 3}),
            "guidance": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets_for(user).filter(has_media=True)
        self.fields["testers"].queryset = (
            get_user_model().objects.filter(groups__name=TESTER).order_by("username").distinct()
        )
        self.fields["items_per_tester"].min_value = 1

    def clean(self):
        data = super().clean()
        dataset = data.get("dataset")
        if dataset is None:
            return data
        problems = plans.plan_problems(
            dataset=dataset,
            setting=data.get("setting") or "",
            balance_by=data.get("balance_by") or "",
            draw=data.get("draw") or "",
            practice_items=data.get("practice_items", []),
            fixed_items=data.get("fixed_items", []),
            row_label=data.get("row_label") or "Human",
        )
        for field, message in problems.items():
            if field not in self.errors:
                self.add_error(field, message)
        return data
