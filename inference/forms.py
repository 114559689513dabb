"""The form that starts a model run."""

from __future__ import annotations

from django import forms

from accounts import inputs
from benchmarks.selectors import datasets_for
from inference.models import ModelRun
from inference.selectors import checkpoint_files, runnable_baselines
from inference.services import MAX_BATCH_SIZE


class RunForm(forms.Form):
    dataset = forms.ModelChoiceField(
        queryset=None, help_text="The items the model answers, as people see them."
    )
    baseline = forms.ChoiceField(help_text="Only the dataset's benchmark's baselines can run on it.")
    setting = forms.CharField(required=False, help_text="Empty: the benchmark's first setting.")
    checkpoint = forms.ChoiceField(
        required=False,
        help_text="Learned baselines only. Empty: the checkpoint that ships with the baseline.",
    )
    device = forms.ChoiceField(choices=ModelRun.Device.choices, initial=ModelRun.Device.AUTO)
    batch_size = forms.IntegerField(min_value=1, max_value=MAX_BATCH_SIZE, initial=32)
    seed = forms.IntegerField(
        initial=0, help_text="The same seed gives the same answers.", **inputs.INT32_BOUNDS
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
        self.fields["checkpoint"].choices = [("", "the baseline's own")] + [
            (name, name) for name in self.checkpoints
        ]

    def clean(self):
        data = super().clean()
        dataset, choice = data.get("dataset"), data.get("baseline")
        if dataset is None or not choice:
            return data
        benchmark, _, name = choice.partition(":")
        if benchmark != dataset.benchmark:
            chosen = next(baseline for key, baseline in self.baselines if f"{key}:{baseline.name}" == choice)
            self.add_error(
                "baseline",
                f"{chosen.title} answers {chosen.spec.title} items; {dataset} is a {dataset.spec.title} "
                "dataset: choose one of its baselines",
            )
        data["baseline_name"] = name
        data["checkpoint"] = self.checkpoints.get(data.get("checkpoint") or "")
        if not data.get("setting"):
            data["setting"] = dataset.spec.settings[0].value
        return data
