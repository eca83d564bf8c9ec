import json

from django import forms
from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Subquery

from reviewapp.judges.selectors import judge_label
from reviewapp.judges.services.judging import JUDGE_METRICS
from reviewapp.models import (
    AssistantVersion,
    JudgeVersion,
    QuestionSet,
    Role,
    RubricVersion,
    Run,
    Sample,
    SetVersion,
)
from scoring import imports, logfile


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
        "expected_values. The set version above becomes a new version of the set named below.",
    )
    set_name = _set_name_field(
        help_text="With the option above: the set to revise (its latest version is the base); "
        "empty for the default set.",
    )
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


class DateRangeForm(forms.Form):
    """Days from a query string, ``from`` and ``to`` (YYYY-MM-DD), both
    optional; refuses a date that is not one, one outside the years 1900 to
    2999, and ``from`` after ``to``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # "from" is a Python keyword, so the fields are named here.
        self.fields["from"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
        self.fields["to"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])

    def clean(self):
        data = super().clean()
        for name in ("from", "to"):
            day = data.get(name)
            if day is not None and not 1900 <= day.year <= 2999:
                self.add_error(name, "Give a date between the years 1900 and 2999.")
        if data.get("from") and data.get("to") and data["from"] > data["to"]:
            raise forms.ValidationError("The first day comes after the last.")
        return data


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


class SampleDrawForm(forms.Form):
    run = forms.ModelChoiceField(
        queryset=Run.objects.filter(status=Run.Status.STORED),
        required=False,
        help_text="Draw from one run…",
    )
    assistant_version = forms.ModelChoiceField(
        queryset=AssistantVersion.objects.all(),
        required=False,
        to_field_name="label",
        help_text="…or from every run of one assistant version uploaded between two dates.",
    )
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    size = forms.IntegerField(min_value=1, max_value=100000, initial=30)
    by_stratum = forms.BooleanField(
        required=False, label="Also stratify by question stratum", help_text="Language always."
    )
    by_split = forms.BooleanField(
        required=False,
        label="Also stratify by split",
        help_text="Tuning and sealed answers become strata of their own, each with its weight.",
    )
    allocation = forms.ChoiceField(choices=Sample.Allocation.choices, initial=Sample.Allocation.PROPORTIONAL)
    min_per_stratum = forms.IntegerField(
        min_value=0,
        initial=1,
        label="Minimum per stratum",
        help_text="For proportional allocation; the strata's minimums must fit in the size.",
    )
    # The seed is stored in a 64-bit column.
    seed = forms.IntegerField(
        required=False,
        min_value=-(2**63),
        max_value=2**63 - 1,
        help_text="Leave empty for a random seed; it is recorded.",
    )
    # Each choice names the question splits (Question.Split) the answers are drawn from.
    SPLIT_CHOICES = {
        "tuning": ("tuning only", ("tuning",)),
        "sealed": ("sealed only (for a release figure)", ("sealed",)),
        "both": ("tuning and sealed", ("tuning", "sealed")),
    }
    splits = forms.ChoiceField(
        choices=[(value, label) for value, (label, _) in SPLIT_CHOICES.items()],
        widget=forms.RadioSelect,
        initial="tuning",
        # Left out, it means the tuning part only: the sealed part is opened on purpose or not at all.
        required=False,
        label="Questions from",
        help_text="Opening the sealed part is recorded with your name, the time and your reason.",
    )
    sealed_reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why open the sealed part",
        help_text="Needed whenever sealed questions are drawn.",
    )
    rubric_version = forms.ModelChoiceField(
        queryset=RubricVersion.objects.select_related("rubric"), empty_label=None
    )
    name = forms.CharField(required=False, max_length=200)

    def clean_splits(self) -> tuple[str, ...]:
        return self.SPLIT_CHOICES[self.cleaned_data["splits"] or "tuning"][1]

    def clean(self):
        data = super().clean()
        if not data.get("run") and not (
            data.get("assistant_version") and data.get("date_from") and data.get("date_to")
        ):
            raise forms.ValidationError("Choose a run, or an assistant version with two dates.")
        data["strata_fields"] = (
            "language",
            *(("stratum",) if data.get("by_stratum") else ()),
            *(("split",) if data.get("by_split") else ()),
        )
        return data


class AssignForm(forms.Form):
    reviewers = forms.ModelMultipleChoiceField(
        queryset=get_user_model()
        .objects.filter(groups__name=Role.REVIEWER, is_active=True)
        .order_by("username"),
        widget=forms.CheckboxSelectMultiple,
    )
    readers_per_item = forms.IntegerField(min_value=1, max_value=10, initial=1, label="Readers per item")


class FailureIntoSetForm(forms.Form):
    version = forms.CharField(max_length=100, label="New set version")
    question = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    expected_values = forms.CharField(help_text="Numbers separated by commas.", required=False)
    expected_caveats = forms.CharField(required=False, help_text="Caveats separated by commas.")

    def clean_expected_values(self) -> list[float]:
        try:
            return [float(v) for v in self.cleaned_data["expected_values"].split(",") if v.strip()]
        except ValueError as error:
            raise forms.ValidationError("Expected values are numbers separated by commas.") from error

    def clean_expected_caveats(self) -> list[str]:
        return [c.strip() for c in self.cleaned_data["expected_caveats"].split(",") if c.strip()]


class RubricForm(forms.Form):
    guidance = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False)
    questions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 7}),
        help_text="One per line: key | question | n/a rule (only for questions that may be not applicable).",
    )
    awkward_cases = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        required=False,
        help_text="One per line: case | the rule decided for it.",
    )

    def clean_questions(self) -> list[dict]:
        questions = []
        for number, line in enumerate(self.cleaned_data["questions"].splitlines(), start=1):
            if not line.strip():
                continue
            parts = [part.strip() for part in line.split("|")]
            if len(parts) < 2 or not parts[0] or not parts[1]:
                raise forms.ValidationError(f"Line {number}: write key | question.")
            key = parts[0]
            if not key.replace("_", "").isalnum():
                raise forms.ValidationError(f"Line {number}: the key {key!r} is letters, digits and _ only.")
            na_rule = parts[2] if len(parts) > 2 else ""
            questions.append({"key": key, "text": parts[1], "allows_na": bool(na_rule), "na_rule": na_rule})
        if not questions:
            raise forms.ValidationError("Write at least one question.")
        return questions

    def clean_awkward_cases(self) -> list[dict]:
        cases = []
        for number, line in enumerate(self.cleaned_data["awkward_cases"].splitlines(), start=1):
            if not line.strip():
                continue
            case, separator, rule = line.partition("|")
            if not separator or not case.strip() or not rule.strip():
                raise forms.ValidationError(f"Line {number}: write case | rule.")
            cases.append({"case": case.strip(), "rule": rule.strip()})
        return cases


class JudgeVersionChoices(forms.ModelMultipleChoiceField):
    """Judge versions as checkboxes, each named as a model grade is always named."""

    def label_from_instance(self, obj) -> str:
        return f"{judge_label(obj)}: {', '.join(obj.metrics)}"


class JudgeForm(forms.Form):
    """A judge version's settings as typed; their sense is checked by
    judging.judge_version_save, whose refusals the view puts next to each field."""

    METRIC_LABELS = {
        "rubric": "rubric: the review rubric's questions, as a reader answers them",
        "faithfulness": "faithfulness (claims supported by the evidence)",
        "answer_relevance": "answer relevance",
        "context_precision": "context precision (needs a reference)",
        "context_recall": "context recall (needs a reference)",
        "answer_correctness": "answer correctness (needs a reference)",
    }

    name = forms.CharField(max_length=100, required=False)
    provider = forms.ChoiceField(choices=JudgeVersion.Provider.choices)
    model = forms.CharField(
        max_length=200,
        required=False,
        help_text="As its provider spells it; left empty for the stand-in.",
    )
    base_url = forms.CharField(
        max_length=500,
        required=False,
        label="Base URL",
        help_text="Only for an OpenAI-compatible server or Anthropic's API; empty for the provider's own.",
    )
    options = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='A JSON object sent with every call, such as {"temperature": 0}.',
    )
    key_variable = forms.CharField(
        max_length=100,
        required=False,
        label="Key variable name",
        help_text="the name of the environment variable holding the key; the key itself is never stored",
    )
    max_tokens = forms.IntegerField(initial=1024, label="Max tokens")
    concurrency = forms.IntegerField(initial=4, help_text="Calls in flight at once for this judge.")
    metrics = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The stand-in grades the rubric, faithfulness and answer relevance only.",
    )
    rubric_version = forms.ModelChoiceField(
        queryset=RubricVersion.objects.select_related("rubric"),
        required=False,
        help_text='Required when "rubric" is checked: the questions the judge answers.',
    )
    validation_threshold = forms.FloatField(
        initial=0.6,
        help_text="Validated for a label when Cohen's kappa's lower bound is above this…",
    )
    validation_min_items = forms.IntegerField(
        initial=50, label="Validation minimum items", help_text="…on at least this many holdout items."
    )

    def __init__(self, *args, new: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        # The rubric first: it is what people grade, so what a judge is validated on.
        metrics = sorted(JUDGE_METRICS, key=lambda metric: metric != JudgeVersion.RUBRIC)
        self.fields["metrics"].choices = [
            (metric, self.METRIC_LABELS.get(metric, metric)) for metric in metrics
        ]
        if not new:
            del self.fields["name"]

    def clean_options(self) -> object:
        text = self.cleaned_data["options"].strip()
        if not text:
            return {}
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"not JSON: {error.msg} at line {error.lineno}") from error


class JudgeRunForm(forms.Form):
    judge_versions = JudgeVersionChoices(
        queryset=JudgeVersion.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label="Judges",
        help_text="The latest version of each judge.",
    )
    regrade_share = forms.FloatField(
        initial=10,
        min_value=0.1,
        max_value=100,
        label="Human regrade share (%)",
        help_text="Drawn at random (at least 30 answers, by language) into a blind sample people read.",
    )
    other_run = forms.ModelChoiceField(
        queryset=Run.objects.none(),
        required=False,
        label="Head to head with",
        empty_label="no: grade this run's answers",
        help_text="Each judge weighs this run's answer against the other run's, asked in both orders.",
    )

    def __init__(self, *args, run=None, **kwargs):
        super().__init__(*args, **kwargs)
        if run is not None:
            self.fields["other_run"].queryset = (
                Run.objects.filter(set_version_id=run.set_version_id, status=Run.Status.STORED)
                .exclude(id=run.id)
                .select_related("assistant_version")
                .order_by("-id")
            )
            self.fields["other_run"].label_from_instance = lambda other: (
                f"run #{other.id} ({other.assistant_version.label})"
            )
        latest = JudgeVersion.objects.filter(judge=OuterRef("judge")).order_by("-number").values("number")[:1]
        self.fields["judge_versions"].queryset = (
            JudgeVersion.objects.filter(number=Subquery(latest))
            .select_related("judge")
            .order_by("judge__name")
        )


class ImportUploadForm(forms.Form):
    """The first step of an import: the file, and its format when it should
    not be guessed from the name and the first bytes."""

    file = forms.FileField(
        label="File to import",
        help_text="An Inspect AI eval log (.eval or .json), a Ragas-style JSON Lines file, or a CSV file. "
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
        help_text="The questions, references and expected values become the set version above, a new "
        "version of the set named below. Untick it to score the answers against an existing set version.",
    )
    set_name = _set_name_field()
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
