from django import forms

from benchmarks.models import Benchmark


class ImportForm(forms.Form):
    benchmark = forms.ChoiceField(choices=Benchmark.choices)
    name = forms.CharField(max_length=200)
    split = forms.CharField(max_length=50, required=False, help_text="train, val, test... (optional)")
    version = forms.CharField(max_length=50, initial="1")
    file = forms.FileField(help_text="The official file: JSON list, data.jsonl, or refexp JSON.")
    scenes = forms.FileField(
        required=False, help_text="CRIC scene graphs or CLEVR-Ref+ scenes JSON (optional)."
    )
    images = forms.FileField(
        required=False,
        help_text="A zip of the images the file references. Leave empty to import for scoring only.",
    )
