"""The form that starts a model run."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import inputs
from benchmarks.selectors import datasets_for
from inference.models import ModelRun
from inference.selectors import checkpoint_files, runnable_baselines
from inference.services import MAX_BATCH_SIZE

#: The devices a run may ask for, as the form offers them (ModelRun.Device's labels, translated).
DEVICE_CHOICES = [
    (ModelRun.Device.AUTO, gettext_lazy("GPU if the worker has one, else CPU")),
    (ModelRun.Device.CPU, gettext_lazy("CPU")),
    (ModelRun.Device.CUDA, gettext_lazy("GPU (CUDA)")),
]


class RunForm(forms.Form):
    dataset = forms.ModelChoiceField(
        label=gettext_lazy("Dataset"),
        queryset=None,
        help_text=gettext_lazy("The items the model answers, as people see them."),
    )
    baseline = forms.ChoiceField(
        label=gettext_lazy("Baseline"),
        help_text=gettext_lazy("Only the dataset's benchmark's baselines can run on it."),
    )
    setting = forms.CharField(
        label=gettext_lazy("Setting"),
        required=False,
        help_text=gettext_lazy("Empty: the benchmark's first setting."),
    )
    checkpoint = forms.ChoiceField(
        label=gettext_lazy("Checkpoint"),
        required=False,
        help_text=gettext_lazy("Learned baselines only. Empty: the checkpoint that ships with the baseline."),
    )
    device = forms.ChoiceField(
        label=gettext_lazy("Device"), choices=DEVICE_CHOICES, initial=ModelRun.Device.AUTO
    )
    batch_size = forms.IntegerField(
        label=gettext_lazy("Batch size"),
        min_value=1,
        max_value=MAX_BATCH_SIZE,
        required=False,
        help_text=gettext_lazy("Empty: the model's own (32 for the baselines)."),
    )
    seed = forms.IntegerField(
        label=gettext_lazy("Seed"),
        initial=0,
        help_text=gettext_lazy("The same seed gives the same answers."),
        **inputs.INT32_BOUNDS,
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets_for(user)
        self.fields["dataset"].label_from_instance = str
        self.baselines = runnable_baselines()
        self.fields["baseline"].choices = [
            (f"{benchmark}:{baseline.name}", f"{baseline.spec.title}: {baseline.title}")
            for benchmark, baseline in self.baselines
        ]
        # By file name: the server's folders are not shown on the page.
        self.checkpoints = {path.name: path for path in checkpoint_files()}
        self.fields["checkpoint"].choices = [("", _("the baseline's own"))] + [
            (name, name) for name in self.checkpoints
        ]

    def clean(self):
        data = super().clean()
        dataset, choice = data.get("dataset"), data.get("baseline")
        if dataset is None or not choice:
            return data
        benchmark, _colon, name = choice.partition(":")
        if benchmark != dataset.benchmark:
            chosen = next(baseline for key, baseline in self.baselines if f"{key}:{baseline.name}" == choice)
            self.add_error(
                "baseline",
                _(
                    "%(baseline)s answers %(benchmark)s items; %(dataset)s is a %(dataset_benchmark)s "
                    "dataset: choose one of its baselines"
                )
                % {
                    "baseline": chosen.title,
                    "benchmark": chosen.spec.title,
                    "dataset": dataset,
                    "dataset_benchmark": dataset.spec.title,
                },
            )
        data["baseline_name"] = name
        data["checkpoint"] = self.checkpoints.get(data.get("checkpoint") or "")
        if not data.get("setting"):
            data["setting"] = dataset.spec.settings[0].value
        return data
