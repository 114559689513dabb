from __future__ import annotations

import re

from django import forms
from django.contrib.auth import get_user_model

from benchmarks.selectors import datasets_for
from humantest import services
from humantest.kinds import KINDS
from humantest.models import PLAN_CHOICES, TestPlan
from yardstick.roles import TESTER

SETTINGS = [("", "–"), ("basic", "TRANCE Basic"), ("event", "TRANCE Event"), ("view", "TRANCE View")]
BALANCE = [("", "No balancing")] + sorted(
    {(name, label) for kind in KINDS.values() for name, label in kind.balance_fields.items()}
)


class IdListField(forms.CharField):
    """External ids separated by commas, spaces or new lines."""

    widget = forms.Textarea(attrs={"rows": 2})

    def to_python(self, value):
        text = super().to_python(value) or ""
        return [part for part in re.split(r"[\s,]+", text) if part]

    def prepare_value(self, value):
        return ", ".join(value) if isinstance(value, list) else value


class TestPlanForm(forms.ModelForm):
    setting = forms.ChoiceField(choices=SETTINGS, required=False)
    balance_by = forms.ChoiceField(choices=BALANCE, required=False)
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
        problems = services.plan_problems(
            dataset=dataset,
            setting=data.get("setting") or "",
            balance_by=data.get("balance_by") or "",
            draw=data.get("draw") or "",
            practice_items=data.get("practice_items", []),
            fixed_items=data.get("fixed_items", []),
            row_label=data.get("row_label") or "Human",
        )
        for field, message in problems.items():
            self.add_error(field, message)
        return data
