"""The API's judge runs: estimate, confirm, follow, cancel, export, and a
judge version's validation tables."""

from __future__ import annotations

import contextlib
import json
from typing import Literal

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from ninja import Field, Router, Schema, Status

from reviewapp.accounts.auth import TokenAuth
from reviewapp.core.api import REFUSALS, DetailOut, _invalid
from reviewapp.core.errors import ApplicationError
from reviewapp.judges import selectors as judge_selectors
from reviewapp.judges.selectors import judge_label
from reviewapp.judges.services.judging import (
    REGRADE_MINIMUM,
    judge_run_cancel,
    judge_run_confirm,
    judge_run_estimate,
    regrade_draw,
)
from reviewapp.judges.validation import judge_validation, validation_title
from reviewapp.models import Judge, JudgeRun, JudgeVersion, Run
from scoring.stats.agreement import ALPHA_FLOOR, KAPPA_INTERVAL_METHOD, MIN_EACH_LABEL

router = Router()


class JudgeRunIn(Schema):
    run_id: int = Field(description="the stored run whose answers the judges grade")
    judge_versions: list[int] = Field(
        min_length=1, description="ids of the judge versions that grade it (a panel: one or more)"
    )
    regrade_share: float = Field(
        default=0.1,
        gt=0,
        le=1,
        description=(
            "the share of answers people re-read blind (spec 002); "
            f"at least {REGRADE_MINIMUM} answers are drawn"
        ),
    )
    confirm: bool = Field(
        default=False,
        description="false: only estimate the cost (status `estimated`), start later with "
        "`POST /api/judge-runs/{id}/confirm`; true: estimate and start at once",
    )


class JudgeEstimateOut(Schema):
    calls: int = Field(
        description="calls to the models, one per answer, judge version and metric it applies to"
    )
    prompt_tokens: int = Field(description="estimated prompt tokens of those calls, before any is sent")
    answers: int


class JudgeVersionOut(Schema):
    id: int
    judge: str
    number: int
    label: str = Field(description="how its grades are always labelled: judge, version and model")
    metrics: list[str]


class JudgeProgressOut(Schema):
    chunks_done: int
    chunks_total: int
    percent: int


class JudgeCountOut(Schema):
    judge_version: int
    label: str
    metric: str
    verdicts: int = Field(description="verdicts stored, failures included")
    failures: int = Field(description="verdicts that failed (endpoint down, key unset, broken rules)")
    undefined: int = Field(description="verdicts without a score and without an error (nothing to grade)")
    mean_score: float | None = Field(description="mean score of the defined verdicts; null when none")
    mean_low: float | None = Field(description="the mean's 95 % interval (mean_method); null when no mean")
    mean_high: float | None
    mean_effective_n: float | None = Field(
        description="what the scores are worth as independent draws when a question's attempts are alike; "
        "null when it is n"
    )
    mean_method: str = Field(description="how the mean's interval is made")


class JudgeRunOut(Schema):
    id: int
    status: str = Field(description="estimated, queued, running, done, failed or cancelled")
    run_id: int | None
    sample_id: int | None = Field(description="the sample graded, for a judge run started on a sample's page")
    regrade_share: float
    regrade_sample: int | None = Field(
        description="the blinded human regrade sample drawn on confirmation (spec 002); null before"
    )
    estimate: JudgeEstimateOut
    judge_versions: list[JudgeVersionOut]
    progress: JudgeProgressOut
    counts: list[JudgeCountOut] = Field(
        description="model grades per judge version and metric: never human grades, always labelled"
    )
    panel: list[dict] = Field(
        description="per metric graded by two judges or more: each judge's mean, the panel mean, "
        f"Krippendorff's alpha (interval) between them and whether it is below the {ALPHA_FLOOR:g} floor"
    )
    head_to_head: list[dict] = Field(
        description="for a head to head (other_run_id set): per judge, wins, losses and ties of run_id's "
        "answers, position consistency, and the win rate (ties half) with its Wilson interval"
    )
    other_run_id: int | None = Field(description="the run weighed against run_id, for a head to head")
    error: str
    links: dict[str, str]


class VerdictLine(Schema):
    judge_run: int
    answer_id: int
    question_id: str
    attempt: int
    language: str
    judge: str = Field(description="the judge's name")
    judge_version: int = Field(description="the judge version's number")
    judge_version_id: int
    judge_label: str = Field(description="how the grade is labelled: judge, version and model")
    metric: str
    score: float | None
    labels: dict = Field(description="the parsed verdict")
    error: str = Field(description="why the verdict failed; empty when it did not")
    undefined: str = Field(description="why there is no score though nothing failed; empty otherwise")
    raw: str = Field(description="the raw completion the verdict was parsed from")
    completions: list[dict] = Field(
        description="every completion asked for it, with tokens and whether cached"
    )
    prompt_hash: str
    seconds: float
    created_at: str


def _judge_run_out(request, judge_run: JudgeRun) -> dict:
    versions = list(judge_run.judge_versions.select_related("judge").order_by("judge__name", "number"))
    links = {
        name: request.build_absolute_uri(f"/api/judge-runs/{judge_run.id}{suffix}")
        for name, suffix in (
            ("self", ""),
            ("confirm", "/confirm"),
            ("cancel", "/cancel"),
            ("verdicts", "/verdicts"),
        )
    }
    if judge_run.run_id:
        links["run"] = request.build_absolute_uri(f"/api/runs/{judge_run.run_id}")
    with contextlib.suppress(NoReverseMatch):  # a deployment may serve the API without the pages
        links["page"] = request.build_absolute_uri(reverse("judge-run-detail", args=[judge_run.id]))
    return {
        "id": judge_run.id,
        "status": judge_run.status,
        "run_id": judge_run.run_id,
        "sample_id": judge_run.sample_id,
        "regrade_share": judge_run.regrade_share,
        "regrade_sample": judge_run.regrade_sample_id,
        "other_run_id": judge_run.other_run_id,
        "panel": (
            judge_selectors.panel_figures(judge_run) if judge_run.status != JudgeRun.Status.ESTIMATED else []
        ),
        "head_to_head": judge_selectors.head_to_head(judge_run) if judge_run.other_run_id else [],
        "estimate": {key: judge_run.estimate.get(key, 0) for key in ("calls", "prompt_tokens", "answers")},
        "judge_versions": [
            {
                "id": version.id,
                "judge": version.judge.name,
                "number": version.number,
                "label": judge_label(version),
                "metrics": version.metrics,
            }
            for version in versions
        ],
        "progress": {
            "chunks_done": judge_run.chunks_done,
            "chunks_total": judge_run.chunks_total,
            "percent": judge_run.progress,
        },
        "counts": judge_selectors.judge_run_counts(judge_run),
        "error": judge_run.error,
        "links": links,
    }


@router.post(
    "/judge-runs",
    response={201: JudgeRunOut, 400: DetailOut, 409: DetailOut, **REFUSALS},
    summary="Estimate (and start) a judge run",
    auth=TokenAuth("judges:write"),
)
def create_judge_run(request, payload: JudgeRunIn):
    """Grade a stored run's answers with one or more judge versions. The cost
    (calls, prompt tokens) is estimated first; with `confirm: false` nothing
    is sent and the run waits in status `estimated` until
    `POST /api/judge-runs/{id}/confirm`. Confirming cuts the run into chunks
    that workers take and draws the blinded human regrade sample. Follow it
    with `GET /api/judge-runs/{id}`.

    422 names the field: an unknown run or judge version, a run whose answers
    are not stored (or with none to grade), a share out of (0, 1]. 400 for
    a body that is not JSON. 409 when
    the run was estimated but could not be started (its regrade sample
    could not be drawn)."""
    run = Run.objects.filter(id=payload.run_id).first()
    if run is None:
        return _invalid("run_id", f"there is no run {payload.run_id}")
    if run.status != Run.Status.STORED:
        return _invalid("run_id", f"run {run.id}'s answers are not stored (it is {run.status})")
    wanted = list(dict.fromkeys(payload.judge_versions))
    versions = list(JudgeVersion.objects.filter(id__in=wanted).select_related("judge"))
    unknown = sorted(set(wanted) - {version.id for version in versions})
    if unknown:
        return _invalid("judge_versions", f"no judge version {', '.join(map(str, unknown))}")
    try:
        judge_run = judge_run_estimate(
            judge_versions=versions, run=run, regrade_share=payload.regrade_share, created_by=request.user
        )
    except ApplicationError as rejected:
        return _invalid("run_id", str(rejected))
    if payload.confirm:
        try:
            judge_run = judge_run_confirm(judge_run=judge_run, draw_regrade=regrade_draw)
        except ApplicationError as rejected:
            return Status(
                409, {"detail": f"judge run {judge_run.id} was estimated but not started: {rejected}"}
            )
    return Status(201, _judge_run_out(request, judge_run))


@router.post(
    "/judge-runs/{judge_run_id}/confirm",
    response={200: JudgeRunOut, 404: DetailOut, 409: DetailOut, **REFUSALS},
    summary="Start an estimated judge run",
    auth=TokenAuth("judges:write"),
)
def confirm_judge_run(request, judge_run_id: int):
    """Accept the estimated cost and start the judge run (and draw its human
    regrade sample). Confirming again changes nothing and answers the run as
    it is. 409 for a run cancelled before it started (estimate a new one) and
    when the regrade sample cannot be drawn (nothing is started)."""
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    if judge_run.status == JudgeRun.Status.CANCELLED and judge_run.confirmed_at is None:
        return Status(409, {"detail": "this judge run was cancelled before it started; estimate a new one"})
    try:
        judge_run = judge_run_confirm(judge_run=judge_run, draw_regrade=regrade_draw)
    except ApplicationError as rejected:  # the regrade sample could not be drawn: nothing started
        return Status(409, {"detail": f"not started: {rejected}"})
    return _judge_run_out(request, judge_run)


@router.post(
    "/judge-runs/{judge_run_id}/cancel",
    response={200: JudgeRunOut, 404: DetailOut, **REFUSALS},
    summary="Cancel a judge run",
    auth=TokenAuth("judges:write"),
)
def cancel_judge_run(request, judge_run_id: int):
    """Stop a judge run: chunks not started never start, a chunk at work stops
    after the answer in hand, and every verdict stored stays. A run that is
    done, failed or cancelled already is answered as it is."""
    judge_run = judge_run_cancel(judge_run=get_object_or_404(JudgeRun, id=judge_run_id))
    return _judge_run_out(request, judge_run)


@router.get(
    "/judge-runs/{judge_run_id}",
    response={200: JudgeRunOut, 404: DetailOut, **REFUSALS},
    summary="A judge run's progress and counts",
    auth=TokenAuth("runs:read"),
)
def get_judge_run(request, judge_run_id: int):
    """Status, progress (chunks done of total, percent), the verdicts, failures
    and undefined verdicts per judge version and metric with their mean
    score, the error if it failed, and the regrade sample. Model grades are
    counted here apart from any human figure."""
    return _judge_run_out(request, get_object_or_404(JudgeRun, id=judge_run_id))


class LabelOut(Schema):
    label: str = Field(description="pass, grade, or rubric:<question key>")
    title: str
    categories: list[str]
    matrix: list[list[int]] = Field(description="rows: people; columns: the judge; in category order")
    n: int
    percent: float | None
    agreeing: int = Field(description="items where people and the judge agree: percent is agreeing / n")
    kappa: float | None
    kappa_low: float | None = Field(description=f"Cohen's kappa, 95 % interval: {KAPPA_INTERVAL_METHOD}")
    kappa_high: float | None
    alpha: float | None = Field(description="Krippendorff's alpha, nominal")
    errors: list[dict] = Field(description="the judge's errors in each direction, each with k and n")
    validated: bool
    missing: str = Field(
        description="which condition of validation is not met; empty when validated. Validated when kappa's "
        "lower bound is above the threshold on enough holdout items and people gave at least "
        f"{MIN_EACH_LABEL} of each label"
    )


class ValidationOut(Schema):
    judge: str
    judge_version: int
    label: str = Field(description="how the judge's grades are labelled")
    title: str = Field(description="validated against people, or internal consistency review")
    validation_set: dict | None = Field(description="id, seed, holdout share and when it was drawn")
    split: str
    items: int
    note: str
    labels: list[LabelOut]


@router.get(
    "/judges/{judge_id}/validation",
    response={200: ValidationOut, 404: DetailOut, **REFUSALS},
    summary="A judge version's validation against people",
    auth=TokenAuth("runs:read"),
)
def judge_validation_tables(
    request, judge_id: int, version: int | None = None, split: Literal["holdout", "tuning"] = "holdout"
):
    """The validation tables of the judge's latest version (or `version`), on
    the holdout items of its latest validation set (or `split=tuning`): per
    label the confusion matrix, percent agreement, Cohen's kappa with its
    interval, Krippendorff's alpha, the judge's errors in each direction,
    and whether it is validated or which condition is missing."""
    judge = get_object_or_404(Judge, id=judge_id)
    versions = judge.versions.all()
    judge_version = versions.filter(number=version).first() if version is not None else versions.first()
    if judge_version is None:
        raise Http404("no such judge version")
    figures = judge_validation(judge_version=judge_version, split=split)
    chosen = figures.validation_set
    return {
        "judge": judge.name,
        "judge_version": judge_version.number,
        "label": judge_label(judge_version),
        "title": validation_title(judge_version),
        "validation_set": None
        if chosen is None
        else {
            "id": chosen.id,
            "seed": chosen.seed,
            "holdout_share": chosen.holdout_share,
            "drawn_at": chosen.created_at.isoformat(),
        },
        "split": split,
        "items": figures.items,
        "note": figures.note,
        "labels": [
            {
                "label": label.label,
                "title": label.title,
                "categories": list(label.categories),
                "matrix": label.matrix,
                "n": label.n,
                "percent": label.percent,
                "agreeing": label.agreeing,
                "kappa": label.kappa,
                "kappa_low": label.kappa_low,
                "kappa_high": label.kappa_upp,
                "alpha": label.alpha,
                "errors": [
                    {"title": error.title, "k": error.k, "n": error.n, "note": error.note}
                    for error in label.errors
                ],
                "validated": label.validated,
                "missing": label.missing,
            }
            for label in figures.labels
        ],
    }


@router.get(
    "/judge-runs/{judge_run_id}/verdicts",
    response={200: None, 404: DetailOut, **REFUSALS},
    summary="A judge run's verdicts, as JSON Lines",
    auth=TokenAuth("runs:read"),
    openapi_extra={
        "responses": {
            200: {
                "description": "one verdict per line, by answer, judge version and metric",
                "content": {"application/x-ndjson": {"schema": VerdictLine.model_json_schema()}},
            }
        }
    },
)
def judge_run_verdicts(request, judge_run_id: int):
    """Every verdict stored so far (the run may still be going), failures
    included with their error, each with its judge's label, parsed labels,
    the raw completion and every completion asked for it. Streamed."""
    judge_run = get_object_or_404(JudgeRun, id=judge_run_id)
    verdicts = judge_selectors.judge_run_verdicts(judge_run)
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in verdicts)
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="judge-run-{judge_run.id}-verdicts.jsonl"'
    return response


# -- the number check --------------------------------------------------------
