from django import forms

from accounts.inputs import one_line
from benchmarks import registry
from benchmarks.storage import check_upload_size


class ImportForm(forms.Form):
    benchmark = forms.ChoiceField(choices=registry.choices)
    name = forms.CharField(max_length=200, validators=[one_line])
    split = forms.CharField(
        max_length=50, required=False, validators=[one_line], help_text="train, val, test... (optional)"
    )
    version = forms.CharField(max_length=50, initial="1", validators=[one_line])
    file = forms.FileField(
        help_text="The official file: JSON list, data.jsonl, or refexp JSON.", validators=[check_upload_size]
    )
    scenes = forms.FileField(required=False, validators=[check_upload_size])
    images = forms.FileField(
        required=False,
        help_text="A zip of the images the file references. Leave empty to import for scoring only.",
        validators=[check_upload_size],
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scenes"].help_text = f"The scenes file of {registry.scenes_titles()} (optional)."
