from django import forms

from benchmarks import registry


class ImportForm(forms.Form):
    benchmark = forms.ChoiceField(choices=registry.choices)
    name = forms.CharField(max_length=200)
    split = forms.CharField(max_length=50, required=False, help_text="train, val, test... (optional)")
    version = forms.CharField(max_length=50, initial="1")
    file = forms.FileField(help_text="The official file: JSON list, data.jsonl, or refexp JSON.")
    scenes = forms.FileField(required=False)
    images = forms.FileField(
        required=False,
        help_text="A zip of the images the file references. Leave empty to import for scoring only.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scenes"].help_text = f"The scenes file of {registry.scenes_titles()} (optional)."
