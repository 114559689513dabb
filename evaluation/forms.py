from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line
from benchmarks.spec import BenchmarkSpec
from benchmarks.storage import check_upload_size
from evaluation.models import Submission


class SubmissionForm(forms.Form):
    """An uploaded prediction file; the setting and variant offered are the dataset's benchmark's."""

    name = forms.CharField(
        max_length=200,
        validators=[one_line],
        label=_("Name"),
        help_text=_('The row label in the report, e.g. "ResNet-50" or "Human".'),
    )
    producer = forms.ChoiceField(
        label=_("Answers by"), choices=Submission.Producer.choices, initial=Submission.Producer.MODEL
    )
    setting = forms.ChoiceField(label=_("Setting"), required=False)
    variant = forms.ChoiceField(
        label=_("Variant"),
        help_text=_("How the file is scored: official follows the released evaluator (see docs/metrics.md)."),
    )
    file = forms.FileField(
        label=_("File"),
        help_text=_("The predictions in the benchmark's format (see docs/metrics.md)."),
        validators=[check_upload_size],
    )

    def __init__(self, *args, spec: BenchmarkSpec, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["setting"].choices = [(choice.value, _(choice.label)) for choice in spec.settings]
        self.fields["setting"].initial = spec.settings[0].value
        if len(spec.settings) == 1:
            self.fields["setting"].widget = forms.HiddenInput()
        self.fields["variant"].choices = [(choice.value, _(choice.label)) for choice in spec.variants]
        self.fields["variant"].initial = spec.variants[0].value
        if len(spec.variants) == 1:
            self.fields["variant"].widget = forms.HiddenInput()


class RenameForm(forms.Form):
    name = forms.CharField(
        max_length=200,
        validators=[one_line],
        label=_("New name"),
        help_text=_("The row label in the report; no other submission here may have it."),
    )
