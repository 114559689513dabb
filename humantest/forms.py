from __future__ import annotations

import re

from django import forms
from django.contrib.auth import get_user_model

from benchmarks.selectors import datasets_for
from humantest.kinds import KINDS
from humantest.models import TestPlan
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
        fields = [
            "name",
            "dataset",
            "setting",
            "row_label",
            "brief",
            "guidance",
            "items_per_tester",
            "draw",
            "seed",
            "balance_by",
            "fixed_items",
            "practice_items",
            "time_limit_s",
            "testers",
        ]
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
        kind = KINDS[dataset.benchmark]
        setting = data.get("setting") or ""
        if setting not in kind.settings:
            allowed = ", ".join(value or "(none)" for value in kind.settings)
            self.add_error("setting", f"{dataset.get_benchmark_display()} takes the setting {allowed}")
        balance = data.get("balance_by") or ""
        if balance and balance not in kind.balance_fields:
            self.add_error("balance_by", f"{dataset.get_benchmark_display()} items have no field {balance!r}")
        if balance == "camera" and setting != "view":
            self.add_error("balance_by", "balancing by final camera needs the View setting")
        if dataset.benchmark == "stevqa" and dataset.meta.get("layout") != "train":
            self.add_error(
                "dataset", "STE-VQA test-layout files name no images: use a training-layout dataset"
            )
        known = set(
            dataset.items.filter(
                external_id__in=[*data.get("practice_items", []), *data.get("fixed_items", [])]
            ).values_list("external_id", flat=True)
        )
        for name in ("practice_items", "fixed_items"):
            missing = [value for value in data.get(name, []) if value not in known]
            if missing:
                self.add_error(name, f"no item {', '.join(missing[:5])} in {dataset}")
        if data.get("draw") == TestPlan.Draw.FIXED and not data.get("fixed_items"):
            self.add_error("fixed_items", "a fixed draw needs its list of item ids")
        return data
