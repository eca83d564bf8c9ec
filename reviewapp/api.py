"""The pipeline API: upload runs and question sets, read scores.

Authenticated by a bearer token (`manage.py api_token USER`). The OpenAPI
schema is served at /api/openapi.json and browsable at /api/docs.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils import timezone
from ninja import Field, File, Form, NinjaAPI, Query, Schema, Status
from ninja.files import UploadedFile
from ninja.security import HttpBearer

from reviewapp import selectors
from reviewapp.models import ApiToken, Run, Scoring
from reviewapp.services.gate import GateRefused, gate_run, parse_floors
from reviewapp.services.question_sets import set_version_upload
from reviewapp.services.runs import run_receive
from reviewapp.services.uploads import UploadRejected
from scoring.gate import DEFAULT_MARGIN_POINTS


class TokenAuth(HttpBearer):
    def authenticate(self, request, token):
        found = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash(token)).first()
        if found is None or not found.user.is_active:
            return None
        ApiToken.objects.filter(id=found.id).update(last_used_at=timezone.now())
        request.user = found.user
        return found.user


api = NinjaAPI(
    title="Answer review API",
    version="1",
    description="Upload runs of logged answers and read their automatic measures.",
    auth=TokenAuth(),
    urls_namespace="api",
)


class ErrorOut(Schema):
    detail: str
    errors: list[str]


class MeasureOut(Schema):
    k: int
    n: int
    rate: float
    low: float
    high: float


class ScoringOut(Schema):
    id: int
    set_version: str
    status: str
    progress: int
    error: str
    unmatched_answers: int
    options: dict[str, bool]
    slice_fields: list[str]
    scores: dict[str, dict[str, MeasureOut]]


class RunOut(Schema):
    id: int
    url: str
    status: str
    progress: int
    duplicate: bool = False
    assistant_version: str
    set_version: str
    file_name: str
    sha256: str
    answers: int
    error: str
    line_errors: list[dict]
    line_error_count: int
    scorings: list[ScoringOut]


class SetVersionOut(Schema):
    version: str
    question_set: str
    questions: int


def _run_out(request, run: Run, *, duplicate: bool = False) -> dict:
    scorings = run.scorings.select_related("set_version").order_by("created_at", "id")
    return {
        "id": run.id,
        "url": request.build_absolute_uri(run.get_absolute_url()),
        "status": run.status,
        "progress": selectors.run_progress(run),
        "duplicate": duplicate,
        "assistant_version": run.assistant_version.label,
        "set_version": run.set_version.version,
        "file_name": run.file_name,
        "sha256": run.sha256,
        "answers": run.answer_count,
        "error": run.error,
        "line_errors": run.line_errors,
        "line_error_count": run.line_error_count,
        "scorings": [
            {
                "id": s.id,
                "set_version": s.set_version.version,
                "status": s.status,
                "progress": s.progress,
                "error": s.error,
                "unmatched_answers": s.unmatched_answers,
                "options": s.options,
                "slice_fields": s.slice_fields,
                "scores": selectors.scores_as_dict(s) if s.status == Scoring.Status.DONE else {},
            }
            for s in scorings
        ],
    }


def _error(rejected: UploadRejected):
    return Status(rejected.status, {"detail": "the upload was refused", "errors": rejected.errors})


@api.post(
    "/runs",
    response={201: RunOut, 200: RunOut, 400: ErrorOut, 413: ErrorOut},
    summary="Upload a run log",
)
def upload_run(
    request,
    file: File[UploadedFile],
    assistant_version: Form[str] = "",
    set_version: Form[str] = "",
    set_from_file: Form[bool] = False,
    set_name: Form[str] = "",
):
    """Store the log and queue its validation and scoring. 201 for a new run,
    200 with `duplicate: true` when the same file is held by a run already.
    Poll `GET /api/runs/{id}` until `status` is stored, rejected or failed and
    each scoring is done; a rejected run lists its bad lines."""
    try:
        received = run_receive(
            upload=file,
            uploaded_by=request.user,
            source=Run.Source.API,
            assistant_version=assistant_version,
            set_version=set_version,
            set_from_file=set_from_file,
            set_name=set_name,
        )
    except UploadRejected as rejected:
        return _error(rejected)
    run = Run.objects.get(id=received.run.id)
    return Status(201 if received.created else 200, _run_out(request, run, duplicate=not received.created))


@api.get("/runs/{run_id}", response=RunOut, summary="A run's status and scores")
def get_run(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("assistant_version", "set_version"), id=run_id)
    return _run_out(request, run)


@api.post(
    "/question-sets",
    response={201: SetVersionOut, 400: ErrorOut, 413: ErrorOut},
    summary="Upload a question set version",
)
def upload_question_set(request, file: File[UploadedFile], version: Form[str] = "", set_name: Form[str] = ""):
    try:
        created = set_version_upload(upload=file, version=version, set_name=set_name, created_by=request.user)
    except UploadRejected as rejected:
        return _error(rejected)
    return Status(
        201,
        {
            "version": created.version,
            "question_set": created.question_set.name,
            "questions": created.questions.count(),
        },
    )


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


@api.get(
    "/gate",
    response={200: dict, 409: dict, 422: dict},
    summary="The release gate",
    openapi_extra={"responses": {422: {"description": "cannot judge: a malformed option, or missing data"}}},
)
def release_gate(request, query: Query[GateQuery]):
    """Judge a candidate version against a baseline on their common
    questions, measure by measure, as a non-inferiority decision: a measure
    passes only when the one-sided 97.5 % lower bound of candidate −
    baseline (Newcombe's interval, in points) is above −`margin`.

    200: every measure passes. 409: a measure fails (shown worse, drops more
    than `max_drop`, misses a `floor` for sure) or is inconclusive (not shown
    safe; the reason says how many paired questions would settle it). 422:
    the gate cannot judge — an unknown measure or a malformed option (named
    in `field`), a missing version or scores, or a measure without paired
    questions."""
    try:
        verdict = gate_run(
            baseline=query.baseline,
            candidate=query.candidate,
            set_version=query.set_version,
            measures=query.measure,
            margin_points=query.margin,
            max_drop_points=query.max_drop,
            floors=parse_floors(query.floor),
        )
    except GateRefused as refused:
        return Status(
            422, {"passed": False, "verdict": "cannot judge", "field": refused.field, "error": str(refused)}
        )
    return Status({0: 200, 1: 409, 2: 422}[verdict["exit_code"]], verdict)
