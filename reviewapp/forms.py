from django import forms

from reviewapp.models import SetVersion


class RunUploadForm(forms.Form):
    file = forms.FileField(
        label="Run log (JSON Lines)",
        help_text="One answer per line; a first line may name the versions.",
    )
    assistant_version = forms.CharField(
        required=False,
        max_length=200,
        help_text="Leave empty when the file's header line or name gives it.",
    )
    set_version = forms.CharField(
        required=False,
        max_length=100,
        help_text="Leave empty when the file's header line or name gives it.",
    )
    set_from_file = forms.BooleanField(
        required=False,
        label="Create or revise the question set from this file",
        help_text="Only for logs in the combined form, whose answers carry "
        "expected_behaviour and expected_values. The set version above becomes a new version.",
    )
    set_name = forms.CharField(
        required=False,
        max_length=200,
        label="Question set name",
        help_text="With the option above: the set to revise (its latest version is the base).",
    )


class SetUploadForm(forms.Form):
    file = forms.FileField(label="Question set (JSON Lines)")
    version = forms.CharField(
        required=False,
        max_length=100,
        help_text="Leave empty when the file's header line or name gives it.",
    )
    set_name = forms.CharField(required=False, max_length=200, label="Question set name")


class RescoreForm(forms.Form):
    set_version = forms.ModelChoiceField(
        queryset=SetVersion.objects.all(), to_field_name="version", empty_label=None
    )
    rounding = forms.BooleanField(
        required=False, help_text="7.6 matches 7.62: values rounded to the number's precision"
    )
    scale_words = forms.BooleanField(required=False, help_text="“1.2 million” also reads as 1,200,000")
    extra_slices = forms.CharField(
        required=False,
        max_length=200,
        label="Also slice by",
        help_text="Answer or question fields, separated by commas (language, stratum and split always).",
    )

    def clean_extra_slices(self) -> list[str]:
        names = [name.strip() for name in self.cleaned_data["extra_slices"].split(",") if name.strip()]
        for name in names:
            if not name.replace("_", "").isalnum():
                raise forms.ValidationError(f"{name!r} is not a field name")
        return names
