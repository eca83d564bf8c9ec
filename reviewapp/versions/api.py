"""The API's release gate: may a candidate version ship against its baseline?"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status

from reviewapp.accounts.auth import TokenAuth
from reviewapp.core.api import REFUSALS, DetailOut
from reviewapp.models import AssistantVersion, SetVersion
from reviewapp.versions.gate import GateRefused, gate_run, parse_floors
from reviewapp.versions.selectors import versions_graded_stable
from scoring.stats.gate import DEFAULT_MARGIN_POINTS

router = Router()


class GateError(Schema):
    passed: bool
    verdict: str
    field: str
    error: str


class GateQuery(Schema):
    baseline: str
    candidate: str
    set_version: str = ""
    measure: list[str] = Field(default=[], description="measures to judge (repeatable)")
    margin: float = Field(default=DEFAULT_MARGIN_POINTS, description="non-inferiority margin, in points")
    max_drop: float | None = Field(default=None, description="largest drop allowed, in points")
    floor: list[str] = Field(
        default=[], description="MEASURE=RATE, the rate a share: the candidate must be shown above it"
    )
    max_p90: float | None = Field(
        default=None, description="seconds: the candidate's end-to-end P90 (nearest rank) may not exceed it"
    )
    max_timeout_rate: float | None = Field(
        default=None, description="a share: the candidate's timeout rate must be shown at or under it"
    )
    judge: str = Field(
        default="",
        description="NAME or NAME:vN: add a judge's rubric grades as a paired measure; "
        "only a judge validated against people is taken (422 otherwise)",
    )
    unequal_attempts: bool = Field(
        default=False,
        description="judge versions that made a different number of attempts per question; "
        "without it they cannot be judged (422), since the one with more is held to a stricter test",
    )


@router.get(
    "/gate",
    response={200: dict, 409: dict, 422: dict, 401: DetailOut, 403: DetailOut},
    summary="The release gate",
    auth=TokenAuth("gate:read"),
    openapi_extra={"responses": {422: {"description": "cannot judge: a malformed option, or missing data"}}},
)
def release_gate(request, query: Query[GateQuery]):
    """Judge a candidate version against a baseline on their common
    questions, measure by measure, as a non-inferiority decision: a measure
    passes only when the one-sided 97.5 % lower bound of candidate −
    baseline (the lower of Newcombe's and Tango's corrected limit, in
    points) is above −`margin`.

    200: every measure passes. 409: a measure fails (shown worse, drops more
    than `max_drop`, misses a `floor` for sure) or is inconclusive (not shown
    safe; the reason says how many paired questions would settle it, as a
    conditional estimate, and how often that many do). 422:
    the gate cannot judge — an unknown measure or a malformed option (named
    in `field`), a missing version or scores, or a measure without paired
    questions. `one_attempt` is the sentence the pages give when a version
    asked each question once (null when both repeated their attempts)."""
    try:
        verdict = gate_run(
            baseline=query.baseline,
            candidate=query.candidate,
            set_version=query.set_version,
            measures=query.measure,
            margin_points=query.margin,
            max_drop_points=query.max_drop,
            floors=parse_floors(query.floor),
            max_p90_s=query.max_p90,
            max_timeout_rate=query.max_timeout_rate,
            judge=query.judge,
            unequal_attempts=query.unequal_attempts,
        )
    except GateRefused as refused:
        return Status(
            422, {"passed": False, "verdict": "cannot judge", "field": refused.field, "error": str(refused)}
        )
    return Status({0: 200, 1: 409, 2: 422}[verdict["exit_code"]], verdict)


class StableQuery(Schema):
    set_version: str
    version: list[str] = Field(min_length=1, description="an assistant version's label (repeatable)")


@router.get(
    "/stable-from-grades",
    response={200: dict, 404: DetailOut, **REFUSALS},
    summary="Stable resolution from grades, and the common subset of several versions",
    auth=TokenAuth("runs:read"),
)
def stable_from_grades(request, query: Query[StableQuery]):
    """Per version (repeat `version`): questions graded fully resolved in every
    attempt (settled human grades, else a judge validated for the grade), k
    of n with the questions not yet known and each source's count; with two
    or more versions, `common`: the questions every one of them fully
    resolved. With one attempt per question, only `note`."""
    set_row = get_object_or_404(SetVersion, version=query.set_version)
    versions = [get_object_or_404(AssistantVersion, label=label) for label in query.version]
    figures = versions_graded_stable(set_row, versions)
    for figure in figures.get("setups", {}).values():
        figure["stable"] = sorted(figure["stable"])
        rate = figure.pop("rate")
        figure["rate"] = None if rate is None else {"value": rate.value, "low": rate.low, "high": rate.high}
        figure["sources"] = dict(figure["sources"])
    return figures


# -- judge runs --------------------------------------------------------------
