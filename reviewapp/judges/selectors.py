"""Reads of judge runs: how a model grade is labelled, the counts per judge
version and metric, and the verdicts one by one."""

from __future__ import annotations

import math
from collections.abc import Iterator

from django.db.models import Avg, Count, Q

from reviewapp.models import (
    JudgeRun,
    JudgeVersion,
    ModelVerdict,
)
from scoring.judge.standin import NAME as STAND_IN_NAME
from scoring.stats.means import MEAN_METHOD, Mean, score_mean


def judge_label(version: JudgeVersion) -> str:
    """How a model grade is always labelled: the judge's name and version, and what stands behind it."""
    behind = STAND_IN_NAME if version.provider == JudgeVersion.Provider.STAND_IN else version.model
    return f"{version.judge.name} v{version.number} ({behind})"


def judge_run_counts(judge_run: JudgeRun) -> list[dict]:
    """Per judge version (labelled) and metric it grades, in version then metric
    order: the verdicts stored, the failures among them (an error, kept and
    counted), the undefined ones (no error, but nothing to grade) and the mean
    score of the defined ones with its 95 % interval, answers clustered by
    question (score_means; None when there is none). A metric not graded yet
    shows zeros."""

    stored = {
        (row["judge_version_id"], row["metric"]): row
        for row in ModelVerdict.objects.shown()
        .filter(judge_run=judge_run)
        .values("judge_version_id", "metric")
        .annotate(
            verdicts=Count("id"),
            failures=Count("id", filter=~Q(error="")),
            undefined=Count("id", filter=Q(error="") & ~Q(undefined="")),
            mean_score=Avg("score"),
        )
        .order_by()
    }
    means = score_means(ModelVerdict.objects.shown().filter(judge_run=judge_run))
    rows = []
    for version in judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"):
        metrics = list(version.metrics) + sorted(
            metric
            for version_id, metric in stored
            if version_id == version.id and metric not in version.metrics
        )
        for metric in metrics:
            row = stored.get((version.id, metric), {})
            rows.append(
                {
                    "judge_version": version.id,
                    "label": judge_label(version),
                    "metric": metric,
                    "verdicts": row.get("verdicts", 0),
                    "failures": row.get("failures", 0),
                    "undefined": row.get("undefined", 0),
                    "mean_score": row.get("mean_score"),
                    **mean_fields(means.get((version.id, metric))),
                }
            )
    return rows


def score_means(verdicts) -> dict[tuple[int, str], Mean]:
    """The mean score of ``verdicts`` (a ModelVerdict queryset) per judge
    version id and metric, over the defined scores, each with its 95 %
    interval (scoring.stats.means), the answers clustered by question: a
    question's attempts are not independent draws."""
    grouped: dict[tuple[int, str], tuple[list[float], list[str]]] = {}
    for version_id, metric, question_id, score in (
        verdicts.filter(error="", score__isnull=False)
        .values_list("judge_version_id", "metric", "answer__question_id", "score")
        .order_by()
    ):
        scores, questions = grouped.setdefault((version_id, metric), ([], []))
        scores.append(score)
        questions.append(question_id)
    return {key: score_mean(scores, questions) for key, (scores, questions) in grouped.items()}


def mean_fields(mean: Mean | None) -> dict:
    """A mean's interval as the pages and the API show it beside the mean."""
    if mean is None:
        return {"mean_low": None, "mean_high": None, "mean_effective_n": None, "mean_method": MEAN_METHOD}
    return {
        "mean_low": mean.low,
        "mean_high": mean.high,
        "mean_effective_n": mean.effective_n,
        "mean_method": MEAN_METHOD,
    }


def judge_run_verdicts(judge_run: JudgeRun) -> Iterator[dict]:
    """Every verdict of a judge run as one flat record, by answer, judge version
    and metric: the judge's name, version and label beside each grade (a
    model grade is never shown unlabelled), the answer's question, the parsed
    labels, the raw completion and every completion asked for it, tokens and
    time. Failures are included, with their error. Read in batches, for streaming."""

    versions = {version.id: version for version in judge_run.judge_versions.select_related("judge")}
    labels = {version_id: judge_label(version) for version_id, version in versions.items()}
    verdicts = (
        ModelVerdict.objects.shown()
        .filter(judge_run=judge_run)
        .select_related("answer")
        .only(
            *(field.name for field in ModelVerdict._meta.concrete_fields),
            "answer__question_id",
            "answer__attempt",
            "answer__language",
        )
        .order_by("answer_id", "judge_version_id", "metric")
    )
    for verdict in verdicts.iterator(chunk_size=500):
        version = versions[verdict.judge_version_id]
        yield {
            "judge_run": judge_run.id,
            "answer_id": verdict.answer_id,
            "question_id": verdict.answer.question_id,
            "attempt": verdict.answer.attempt,
            "language": verdict.answer.language,
            "judge": version.judge.name,
            "judge_version": version.number,
            "judge_version_id": version.id,
            "judge_label": labels[version.id],
            "metric": verdict.metric,
            "score": verdict.score,
            "labels": verdict.labels,
            "error": verdict.error,
            "undefined": verdict.undefined,
            "raw": verdict.raw,
            "completions": verdict.completions,
            "prompt_hash": verdict.prompt_hash,
            "seconds": verdict.seconds,
            "created_at": verdict.created_at.isoformat(),
        }


def head_to_head(judge_run: JudgeRun) -> list[dict]:
    """Each judge's preference between the judge run's two runs, asked in both
    orders: wins, losses and ties from the first run's side, position
    consistency, and the win rate (ties half) with a Wilson interval."""
    from scoring.judge.preference import preference_summary

    rows = []
    for version in judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"):
        verdicts = ModelVerdict.objects.shown().filter(
            judge_run=judge_run, judge_version=version, metric="preference"
        )
        labels = [labels for labels, error in verdicts.values_list("labels", "error") if not error]
        errors = verdicts.exclude(error="").count()
        rows.append({"judge": judge_label(version), **preference_summary(labels, errors=errors)})
    return rows


def panel_figures(judge_run: JudgeRun) -> list[dict]:
    """For each metric graded by two judges or more: each judge's mean and
    the panel's mean (the mean over answers of the judges' mean), each with
    its 95 % interval, answers clustered by question (scoring.stats.means),
    and Krippendorff's alpha (interval) between the judges over
    the answers, with a warning below ALPHA_FLOOR: the judges then do not
    measure the same thing and their mean should not be trusted."""
    from scoring.stats.agreement import ALPHA_FLOOR, krippendorff_alpha

    versions = list(judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"))
    figures = []
    metrics = sorted({metric for version in versions for metric in version.metrics if metric != "preference"})
    for metric in metrics:
        graders = [version for version in versions if metric in version.metrics]
        if len(graders) < 2:
            continue
        scores: dict[int, dict[int, float]] = {version.id: {} for version in graders}
        question_of: dict[int, str] = {}
        for version_id, answer_id, question_id, score in (
            ModelVerdict.objects.shown()
            .filter(judge_run=judge_run, metric=metric, error="", score__isnull=False)
            .values_list("judge_version_id", "answer_id", "answer__question_id", "score")
        ):
            if version_id in scores:
                scores[version_id][answer_id] = score
                question_of[answer_id] = question_id
        answers = sorted({answer_id for by_answer in scores.values() for answer_id in by_answer})
        data = [[scores[version.id].get(answer_id) for answer_id in answers] for version in graders]
        means = []
        for version in graders:
            by_answer = scores[version.id]
            mean = score_mean(list(by_answer.values()), [question_of[answer] for answer in by_answer])
            means.append(
                {
                    "judge": judge_label(version),
                    "mean": mean.value if mean else None,
                    "n": len(by_answer),
                    **mean_fields(mean),
                }
            )
        per_answer = (
            [[value for value in column if value is not None] for column in zip(*data, strict=True)]
            if answers
            else []
        )
        panel_answers = [answer for answer, values in zip(answers, per_answer, strict=True) if values]
        panel = score_mean(
            [sum(values) / len(values) for values in per_answer if values],
            [question_of[answer] for answer in panel_answers],
        )
        try:
            alpha = krippendorff_alpha(data, level="interval") if answers else None
        except (ValueError, ZeroDivisionError):
            alpha = None
        if alpha is not None and math.isnan(alpha):
            alpha = None
        figures.append(
            {
                "metric": metric,
                "judges": means,
                "panel_mean": panel.value if panel else None,
                "panel": mean_fields(panel),
                "alpha": alpha,
                "items": sum(1 for values in per_answer if len(values) >= 2),
                "warning": alpha is not None and alpha < ALPHA_FLOOR,
                "floor": ALPHA_FLOOR,
            }
        )
    return figures
