"""The form that starts a model run."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import inputs
from benchmarks.selectors import datasets_for
from inference import served
from inference.models import ModelRun
from inference.selectors import checkpoint_files, runnable_baselines
from inference.services import MAX_BATCH_SIZE

#: The devices a run may ask for, as the form offers them (ModelRun.Device's labels, translated).
DEVICE_CHOICES = [
    (ModelRun.Device.AUTO, gettext_lazy("GPU if the worker has one, else CPU")),
    (ModelRun.Device.CPU, gettext_lazy("CPU")),
    (ModelRun.Device.CUDA, gettext_lazy("GPU (CUDA)")),
]
#: The served model's fields and the run options they fill (`ModelRun.options`).
SERVED_FIELDS = {
    "endpoint": "endpoint",
    "protocol": "protocol",
    "served_model": "model",
    "api_key_env": "api_key_env",
    "concurrency": "concurrency",
    "timeout_s": "timeout_s",
    "retries": "retries",
    "max_tokens": "max_tokens",
}
PROTOCOL_CHOICES = [
    (
        served.OPENAI,
        gettext_lazy("OpenAI-compatible chat server (one request per item to /chat/completions)"),
    ),
    (served.YARDSTICK, gettext_lazy("Yardstick (a batch of items in, their answers out)")),
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
    endpoint = forms.CharField(
        label=gettext_lazy("Endpoint"),
        required=False,
        max_length=2000,
        help_text=gettext_lazy(
            "The server's URL: its base URL for the OpenAI protocol (such as http://gpu-box:8000/v1), the "
            "URL that takes the batches for the Yardstick protocol. No password or key in it."
        ),
    )
    protocol = forms.ChoiceField(
        label=gettext_lazy("Protocol"), choices=PROTOCOL_CHOICES, initial=served.OPENAI, required=False
    )
    served_model = forms.CharField(
        label=gettext_lazy("Model name"),
        required=False,
        max_length=200,
        help_text=gettext_lazy("The model's name as the server knows it (needed for the OpenAI protocol)."),
    )
    api_key_env = forms.CharField(
        label=gettext_lazy("API key variable"),
        required=False,
        max_length=128,
        help_text=gettext_lazy(
            "The name of an environment variable on the worker that holds the key, starting with "
            "YARDSTICK_SERVED_KEY_ (no other variable of the worker can be sent), sent as a bearer "
            "token; never the key itself. Empty: no key."
        ),
    )
    concurrency = forms.IntegerField(
        label=gettext_lazy("Requests at once"),
        required=False,
        min_value=served.CONCURRENCY[0],
        max_value=served.CONCURRENCY[1],
        help_text=gettext_lazy("1 to 32. Empty: 4."),
    )
    timeout_s = forms.FloatField(
        label=gettext_lazy("Timeout (seconds)"),
        required=False,
        min_value=served.TIMEOUT_S[0],
        max_value=served.TIMEOUT_S[1],
        help_text=gettext_lazy("For each request, up to 600. Empty: 60."),
    )
    retries = forms.IntegerField(
        label=gettext_lazy("Retries"),
        required=False,
        min_value=served.RETRIES[0],
        max_value=served.RETRIES[1],
        help_text=gettext_lazy(
            "After a connection error, a timeout, 429 or 5xx, each after a longer wait; 0 to 10. Empty: 3."
        ),
    )
    max_tokens = forms.IntegerField(
        label=gettext_lazy("Most tokens per answer"),
        required=False,
        min_value=served.MAX_TOKENS[0],
        max_value=served.MAX_TOKENS[1],
        help_text=gettext_lazy("OpenAI protocol. Empty: 256."),
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
        self.checkpoints = checkpoint_files()
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
        data["options"] = (
            {
                option: data[field]
                for field, option in SERVED_FIELDS.items()
                if data.get(field) is not None and data.get(field) != ""
            }
            if name == served.SERVED
            else {}
        )
        data["checkpoint"] = self.checkpoints.get(data.get("checkpoint") or "")
        if not data.get("setting"):
            data["setting"] = dataset.spec.settings[0].value
        return data
