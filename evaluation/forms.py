from django import forms

from evaluation.models import Submission


class SubmissionForm(forms.Form):
    name = forms.CharField(
        max_length=200, help_text='The row label in the report, e.g. "ResNet-50" or "Human".'
    )
    kind = forms.ChoiceField(choices=Submission.Kind.choices, initial=Submission.Kind.MODEL)
    setting = forms.ChoiceField(
        required=False,
        choices=[
            ("", "–"),
            ("basic", "TRANCE Basic"),
            ("event", "TRANCE Event"),
            ("view", "TRANCE View"),
            ("mono", "STE-VQA monolingual"),
            ("bi", "STE-VQA bilingual"),
        ],
    )
    variant = forms.ChoiceField(
        choices=[("official", "official (released evaluator)"), ("paper", "paper")],
        initial="official",
        help_text="STE-VQA only: the released evaluator's rules, or the paper's.",
    )
    file = forms.FileField(help_text="The predictions in the benchmark's format (see docs/metrics.md).")
