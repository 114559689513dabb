from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy

from accounts.roles import TESTER
from benchmarks import registry
from benchmarks.selectors import datasets_for
from benchmarks.spec import BenchmarkSpec
from humantest import plans
from humantest.models import PLAN_CHOICES, TestPlan
from humantest.trials import BenchmarkTrial, trial_for


def trial_specs() -> list[tuple[BenchmarkSpec, BenchmarkTrial]]:
    """Every benchmark people can be tested on, with its trial."""
    return [(spec, trial_for(spec.name)) for spec in registry.specs() if spec.trial]


def setting_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    """The settings people can be tested in, grouped by benchmark (the dataset decides which
    group applies: the form's script shows that one only, the plan's rules refuse the others)."""
    return [
        (spec.title, [(choice.value, gettext_lazy(choice.label)) for choice in trial.offered_settings()])
        for spec, trial in trial_specs()
    ]


def balance_choices() -> list[tuple[str, Any]]:
    """What a draw can be balanced by, grouped by benchmark, after "No balancing"."""
    return [
        ("", gettext_lazy("No balancing")),
        *[
            (spec.title, [(name, field.label) for name, field in trial.balance_fields.items()])
            for spec, trial in trial_specs()
            if trial.balance_fields
        ],
    ]


class DatasetSelect(forms.Select):
    """The dataset list; each option names its benchmark in `data-benchmark` (for plan_form.js)."""

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex=subindex, attrs=attrs)
        dataset = getattr(value, "instance", None)
        if dataset is not None:
            option["attrs"]["data-benchmark"] = dataset.benchmark
        return option


class ByBenchmarkSelect(forms.Select):
    """Options grouped under benchmark titles; each grouped option carries `data-benchmark` (and
    `data-setting`, the setting it needs, where it needs one), so that plan_form.js can show only
    the chosen dataset's benchmark's options."""

    def __init__(self, attrs=None, *, balancing: bool = False):
        super().__init__(attrs)
        self.balancing = balancing  # the options are ways to balance (BalanceField names)

    def optgroups(self, name, value, attrs=None):
        groups = super().optgroups(name, value, attrs)
        by_title = {spec.title: (spec, trial) for spec, trial in trial_specs()}
        for title, options, _ in groups:
            if title not in by_title:
                continue
            spec, trial = by_title[title]
            for option in options:
                option["attrs"]["data-benchmark"] = spec.name
                field = trial.balance_fields.get(option["value"]) if self.balancing else None
                if field is not None and field.setting:
                    option["attrs"]["data-setting"] = field.setting
        return groups


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

    setting = forms.ChoiceField(
        label=gettext_lazy("Setting"), choices=setting_choices, required=False, widget=ByBenchmarkSelect
    )
    balance_by = forms.ChoiceField(
        label=gettext_lazy("Balance by"),
        choices=balance_choices,
        required=False,
        widget=ByBenchmarkSelect(balancing=True),
    )
    practice_items = IdListField(
        label=gettext_lazy("Practice items"),
        required=False,
        help_text=gettext_lazy("Item ids shown as practice, with the answer after each."),
    )
    fixed_items = IdListField(
        label=gettext_lazy("Fixed items"),
        required=False,
        help_text=gettext_lazy("For a fixed draw: the item ids every tester gets, in order."),
    )
    catch_items = IdListField(
        label=gettext_lazy("Catch items"),
        required=False,
        help_text=gettext_lazy(
            "Item ids with a known, obvious answer, mixed in to check attention; never scored."
        ),
    )

    class Meta:
        model = TestPlan
        fields = list(PLAN_CHOICES)
        labels = {
            "name": gettext_lazy("Name"),
            "dataset": gettext_lazy("Dataset"),
            "row_label": gettext_lazy("Row label"),
            "brief": gettext_lazy("Brief"),
            "guidance": gettext_lazy("Guidance"),
            "draw": gettext_lazy("Draw"),
            "seed": gettext_lazy("Seed"),
            "testers": gettext_lazy("Testers"),
            "time_limit_s": gettext_lazy("Time limit (seconds)"),
            "items_per_tester": gettext_lazy("Items per tester"),
            "qualify_min_correct": gettext_lazy("Practice answers right to qualify"),
            "qualify_rounds": gettext_lazy("Practice rounds to qualify in"),
            "catch_count": gettext_lazy("Catch trials per tester"),
            "catch_from_easy": gettext_lazy("Also use items every tester so far answered right"),
        }
        help_texts = {
            "dataset": gettext_lazy("The settings and balancing offered below follow its benchmark.")
        }
        widgets = {
            "dataset": DatasetSelect,
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
        for name in ("qualify_rounds", "catch_count"):  # empty: the model's default
            self.fields[name].required = False

    def clean_qualify_rounds(self):
        return self.cleaned_data.get("qualify_rounds") or 1

    def clean_catch_count(self):
        return self.cleaned_data.get("catch_count") or 0

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
            catch_items=data.get("catch_items", []),
            catch_count=data.get("catch_count") or 0,
            catch_from_easy=bool(data.get("catch_from_easy")),
            qualify_min_correct=data.get("qualify_min_correct"),
            qualify_rounds=data.get("qualify_rounds") or 1,
        )
        for field, message in problems.items():
            if field not in self.errors:
                self.add_error(field, message)
        return data
