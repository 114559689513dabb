from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.inputs import one_line
from benchmarks import registry
from benchmarks.storage import check_upload_size


class ImportForm(forms.Form):
    benchmark = forms.ChoiceField(label=gettext_lazy("Benchmark"), choices=registry.choices)
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200, validators=[one_line])
    split = forms.CharField(
        label=gettext_lazy("Split"),
        max_length=50,
        required=False,
        validators=[one_line],
        help_text=gettext_lazy("train, val, test... (optional)"),
    )
    version = forms.CharField(
        label=gettext_lazy("Version"), max_length=50, initial="1", validators=[one_line]
    )
    file = forms.FileField(
        label=gettext_lazy("File"),
        help_text=gettext_lazy("The official file: JSON list, data.jsonl, or refexp JSON."),
        validators=[check_upload_size],
    )
    scenes = forms.FileField(label=gettext_lazy("Scenes"), required=False, validators=[check_upload_size])
    images = forms.FileField(
        label=gettext_lazy("Images"),
        required=False,
        help_text=gettext_lazy(
            "A zip of the images the file references. Leave empty to import for scoring only."
        ),
        validators=[check_upload_size],
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scenes"].help_text = _("The scenes file of %(benchmarks)s (optional).") % {
            "benchmarks": registry.scenes_titles()
        }
