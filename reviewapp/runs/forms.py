"""Forms of the runs pages: upload a run, a question set or another tool's file,
exclude a run, open its sealed part, re-score it."""

from __future__ import annotations

from django import forms

from reviewapp.models import (
    AssistantVersion,
    QuestionSet,
    SetVersion,
)
from scoring import imports, logfile
from scoring.production import PERIODS


def _label_validator(value: str) -> None:
    if problem := logfile.label_problem(value):
        raise forms.ValidationError(f"Not a version label: {problem}.")


def _set_name_validator(value: str) -> None:
    if problem := logfile.set_name_problem(value):
        raise forms.ValidationError(f"Not a set name: {problem}.")


def _label_field(datalist: str, **kwargs) -> forms.CharField:
    """A version label typed with suggestions from ``datalist``."""
    return forms.CharField(
        max_length=logfile.LABEL_MAX_LENGTH,
        validators=[_label_validator],
        widget=forms.TextInput(attrs={"list": datalist, "autocomplete": "off"}),
        **kwargs,
    )


def _set_name_field(**kwargs) -> forms.CharField:
    return forms.CharField(
        required=False,
        max_length=logfile.SET_NAME_MAX_LENGTH,
        validators=[_set_name_validator],
        widget=forms.TextInput(attrs={"list": "set-names", "autocomplete": "off"}),
        label="Question set name",
        **kwargs,
    )


def _revise_field() -> forms.BooleanField:
    return forms.BooleanField(
        required=False,
        label="Revise the named set",
        help_text="The new version keeps the questions of the named set's latest version, this file's "
        "added or replacing them. You see what it adds, changes and keeps before anything is stored.",
    )


def _seal_seed_field() -> forms.IntegerField:
    return forms.IntegerField(
        required=False,
        label="Seal a third, with seed",
        help_text="For a new set that states no split: a random third of its questions, each language and "
        "stratum keeping its third, is sealed and the rest are tuning. The same seed draws the same "
        "third (python -m scoring.split). Leave empty to keep the file's splits.",
    )


class RunUploadForm(forms.Form):
    """A run log and what names its versions. The versions already known are
    offered as suggestions (``known_*``, for datalists), never as the only
    choice: a new assistant version is made on upload, and a new set version
    when the question set is taken from the file."""

    # Suggestions, newest first; a longer history is typed, not scrolled.
    SUGGESTIONS = 200

    file = forms.FileField(
        label="Run log (JSON Lines)",
        help_text="One answer per line; a first line may name the versions. Gzip-compressed files "
        "are read too.",
    )
    assistant_version = _label_field(
        "assistant-versions",
        required=False,
        help_text="Empty when the file's header line or name gives it; a new label makes a new version "
        "(ASCII letters, digits, '.', '_', '-', '+').",
    )
    set_version = _label_field(
        "set-versions",
        required=False,
        help_text="Pick one from the list, or leave empty when the file's header line or name gives it. "
        "Taking the set from the file needs a new one.",
    )
    set_from_file = forms.BooleanField(
        required=False,
        label="Create or revise the question set from this file",
        help_text="For a log in the combined form: each answer carries expected_behaviour and "
        "expected_values. The set version above then holds this file's questions, and nothing else.",
    )
    set_name = _set_name_field(
        help_text="With the option above: a new set's name; empty, the set is named after its version.",
    )
    revise_set = _revise_field()
    seal_seed = _seal_seed_field()
    repeats = forms.IntegerField(
        required=False,
        min_value=1,
        label="Repeats run #",
        help_text="The earlier run of the same version on the same set that this one repeats "
        "(or the header's \"repeats\"). Both stay in the version's record.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.known_set_versions = list(
            SetVersion.objects.select_related("question_set").order_by("-id")[: self.SUGGESTIONS]
        )
        self.known_assistant_versions = list(
            AssistantVersion.objects.order_by("-created_at", "-id").values_list("label", flat=True)[
                : self.SUGGESTIONS
            ]
        )
        self.known_set_names = list(QuestionSet.objects.values_list("name", flat=True)[: self.SUGGESTIONS])

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("seal_seed") is not None and cleaned.get("revise_set"):
            # A revision keeps the splits of the version it revises.
            self.add_error(
                "seal_seed", "A revision keeps its base version's splits: seal a third only of a new set."
            )
        return cleaned


class ProductionFrameForm(forms.Form):
    file = forms.FileField(label="Production questions (JSON Lines, each line with asked_at)")
    version = forms.CharField(
        max_length=logfile.LABEL_MAX_LENGTH, validators=[_label_validator], label="New set version"
    )
    set_name = _set_name_field()
    start = forms.DateField(label="Asked from", help_text="The first day, e.g. 2026-11-01 (UTC).")
    end = forms.DateField(label="Asked to", help_text="The last day, included.")
    period = forms.ChoiceField(
        choices=[(period, f"by {period}") for period in PERIODS],
        label="Strata",
        help_text="Each week or month of asked time gets its share of the sample.",
    )
    size = forms.IntegerField(min_value=1, label="Questions to draw")
    seed = forms.IntegerField(label="Seed", help_text="The same seed and frame draw the same questions.")


class SetUploadForm(forms.Form):
    FORMATS = (
        ("", "this app's question set (JSON Lines)"),
        ("open", "an open-ended QA dataset (spec 001): question and reference answer"),
        ("mc", "a multiple-choice QA dataset (spec 001): question, options and the correct one"),
    )

    file = forms.FileField(label="Question set (JSON Lines, or a QA dataset in JSON Lines or CSV)")
    qa_task = forms.ChoiceField(required=False, choices=FORMATS, label="The file is")
    qa_columns = forms.CharField(
        required=False,
        max_length=500,
        label="QA dataset columns",
        help_text="For a QA dataset whose columns are not named question, reference, options, correct: "
        "key=column pairs, e.g. question=Question,reference=Gold,id=qid (options=a+b+c for one column per "
        "option).",
    )
    qa_language = forms.CharField(
        required=False,
        initial="en",
        max_length=logfile.LANGUAGE_MAX_LENGTH,
        label="QA dataset language",
        help_text="The language of a QA dataset's questions.",
    )
    version = forms.CharField(
        required=False,
        max_length=logfile.LABEL_MAX_LENGTH,
        validators=[_label_validator],
        help_text="Leave empty when the file's header line or name gives it. "
        "ASCII letters, digits, '.', '_', '-' and '+'.",
    )
    set_name = forms.CharField(
        required=False,
        max_length=logfile.SET_NAME_MAX_LENGTH,
        validators=[_set_name_validator],
        label="Question set name",
    )
    seal_seed = _seal_seed_field()


class RunExcludeForm(forms.Form):
    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown beside the run on its version's dashboard.",
    )


class SealedOpenForm(forms.Form):
    reason = forms.CharField(
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Kept with the scoring, beside who opened it and when.",
    )


class RescoreForm(forms.Form):
    set_version = forms.ModelChoiceField(
        queryset=SetVersion.objects.all(), to_field_name="version", empty_label=None
    )
    rounding = forms.BooleanField(
        required=False, help_text="7.6 matches 7.62: values rounded to the number's precision"
    )
    scale_words = forms.BooleanField(required=False, help_text="“1.2 million” also reads as 1,200,000")
    distinct = forms.BooleanField(
        required=False,
        label="Count distinct values",
        help_text="Each distinct number and cited id once per answer. "
        "By default every occurrence counts, as spec 000's reference script counts.",
    )
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


class ImportUploadForm(forms.Form):
    """The first step of an import: the file, and its format when it should
    not be guessed from the name and the first bytes."""

    file = forms.FileField(
        label="File to import",
        help_text="An Inspect AI eval log (.eval or .json), a Ragas-style JSON Lines file, lm-evaluation-"
        "harness samples (samples_<task>_<date>.jsonl from --log_samples), or a CSV file. "
        "Gzip-compressed files are read too.",
    )
    format = forms.ChoiceField(
        required=False,
        choices=[("", "recognise it from the file"), *imports.FORMAT_LABELS.items()],
        label="Format",
    )


class ImportConfirmForm(forms.Form):
    """The second step: the versions the file suggested, confirmed or changed,
    and what each of the run log's fields is read from."""

    key = forms.CharField(widget=forms.HiddenInput)
    assistant_version = _label_field(
        "assistant-versions",
        help_text="ASCII letters, digits, '.', '_', '-', '+'; a new label makes a new version.",
    )
    set_version = _label_field("set-versions")
    set_from_file = forms.BooleanField(
        required=False,
        label="Create or revise the question set from this file",
        help_text="The questions, references and expected values become the set version above, holding "
        "this file's questions alone. Untick it to score the answers against an existing set version.",
    )
    set_name = _set_name_field(help_text="A new set's name; empty, the set is named after its version.")
    revise_set = _revise_field()
    seen = forms.CharField(required=False, widget=forms.HiddenInput)
    language = forms.CharField(
        max_length=logfile.LANGUAGE_MAX_LENGTH,
        initial="en",
        help_text="For answers whose file gives no language.",
    )

    def __init__(self, *args, mappable=(), fields=(), labels=None, defaults=None, derived=None, **kwargs):
        super().__init__(*args, **kwargs)
        labels = labels or {}
        defaults = defaults or {}
        derived = derived or {}
        choices = [(name, name) for name in fields]
        self.mapping_names = []
        for target in mappable:
            name = f"map_{target}"
            # The empty choice says what it stands for: the column the reader
            # takes by default, or none.
            default = defaults.get(target)
            empty = f"default: {default}" if default else f"default: {derived.get(target, 'none')}"
            self.fields[name] = forms.ChoiceField(
                required=False,
                choices=[("", empty), (self.NONE, "none: leave it out"), *choices],
                label=labels.get(target, target),
            )
            self.mapping_names.append(name)

    def clean_language(self) -> str:
        value = self.cleaned_data["language"].strip()
        if problem := logfile.language_problem(value):
            raise forms.ValidationError(problem)
        return value

    def clean(self):
        cleaned = super().clean()
        if self.is_bound and not cleaned.get("set_from_file"):
            version = cleaned.get("set_version")
            if version and not SetVersion.objects.filter(version=version).exists():
                self.add_error(
                    "set_version",
                    f"Set version {version} is not known here: tick the box to create it from the file, "
                    "or name an existing one.",
                )
        return cleaned

    # The choice that turns a field's default off: an empty column in the mapping.
    NONE = "(none)"

    def mapping(self) -> dict[str, str]:
        """Field -> column for each field not left at its default ("" for one turned off)."""
        return {
            name.removeprefix("map_"): "" if self.cleaned_data[name] == self.NONE else self.cleaned_data[name]
            for name in self.mapping_names
            if self.cleaned_data.get(name)
        }

    def mapping_fields(self):
        return [self[name] for name in self.mapping_names]
