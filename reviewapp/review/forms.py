"""Forms of the review pages: draw a sample, assign readers, turn a failure
into a question, edit a rubric, choose dates."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from reviewapp.core.once import key_field
from reviewapp.models import (
    AssistantVersion,
    Role,
    RubricVersion,
    Run,
    Sample,
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


class SampleDrawForm(forms.Form):
    submission_key = key_field()
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
    # A judge's regrade sample is drawn by its judge run, never here.
    purpose = forms.ChoiceField(
        choices=[
            (Sample.Purpose.REVIEW, Sample.Purpose.REVIEW.label),
            (Sample.Purpose.JUDGE_VALIDATION, Sample.Purpose.JUDGE_VALIDATION.label),
        ],
        initial=Sample.Purpose.REVIEW,
        required=False,
        label="Drawn for",
        help_text="A version's review figures count the samples drawn for review, unless a manager "
        "chooses others.",
    )

    def clean_purpose(self) -> str:
        return self.cleaned_data["purpose"] or Sample.Purpose.REVIEW

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
