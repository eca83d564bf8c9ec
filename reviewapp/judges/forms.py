"""Forms of the judges pages: a judge version's settings and a judge run."""

from __future__ import annotations

import json

from django import forms
from django.db.models import OuterRef, Subquery

from reviewapp.judges.selectors import judge_label
from reviewapp.judges.services.judge_versions import JUDGE_METRICS
from reviewapp.judges.services.judging import REGRADE_MINIMUM
from reviewapp.models import (
    JudgeVersion,
    RubricVersion,
    Run,
)
from scoring.stats.agreement import MIN_EACH_LABEL


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
        initial=50,
        label="Validation minimum items",
        help_text=f"…on at least this many holdout items, with at least {MIN_EACH_LABEL} of each label among "
        "people's.",
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
            return json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"not JSON: {error.msg} at line {error.lineno}") from error
        except RecursionError as error:
            raise forms.ValidationError("nested too deeply to be options: a few levels are plenty") from error
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number an option can hold: write a number")


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
        help_text=(
            f"Drawn at random (at least {REGRADE_MINIMUM} answers, by language) "
            "into a blind sample people read."
        ),
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
