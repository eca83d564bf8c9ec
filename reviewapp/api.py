"""The pipeline API: upload runs and question sets, read scores.

Authenticated by a bearer token (the API tokens page, or `manage.py api_token
USER`). A token acts as its user: each operation needs one scope on the token
and one of that scope's roles (reviewapp.core.roles.SCOPES) on the user, the same
roles the pages ask for. The OpenAPI schema is served at /api/openapi.json and
browsable at /api/docs.
"""

from __future__ import annotations

import contextlib
import gc
import json
import time
from datetime import timedelta
from typing import Literal

import orjson
from django.db.models import Q
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from ninja import Field, File, Form, NinjaAPI, Query, Schema, Status
from ninja.errors import AuthorizationError
from ninja.files import UploadedFile
from ninja.security import HttpBearer
from pydantic import ConfigDict, TypeAdapter

from reviewapp.core.roles import SCOPES, has_role
from reviewapp.core.uploads import UploadRejected
from reviewapp.judges.services.judging import (
    judge_label,
    judge_run_cancel,
    judge_run_confirm,
    judge_run_estimate,
    regrade_draw,
)
from reviewapp.models import ApiToken, Judge, JudgeRun, JudgeVersion, Role, Run, Scoring
from reviewapp.runs.services.imports import import_preview, import_receive, pending_store
from reviewapp.runs.services.question_sets import set_version_upload
from reviewapp.runs.services.runs import run_receive
from reviewapp.scorings import selectors
from reviewapp.versions import selectors as dashboard
from reviewapp.versions.gate import GateRefused, gate_run, parse_floors
from scoring import imports, logfile
from scoring.check import MAX_ANSWER_BYTES, CheckInputError, check_numbers
from scoring.gate import DEFAULT_MARGIN_POINTS

# A token's last use is written at most this often: a pipeline calling the
# check a thousand times a second would otherwise write its token's row a
# thousand times a second. The tokens page shows it to the minute.
USE_RECORDED_EVERY = timedelta(minutes=1)


class TokenCache:
    """Tokens found in the last ``seconds``, by the hash of their key.

    For the hot path of POST /api/check: a hit skips the token's and its
    user's roles' queries. What the cache holds is as the database was when
    the token was looked up, so revoking a token, making its user inactive or
    taking a role away reaches a process that used it within ``seconds``;
    expiry is checked on every request. Per process: each server worker
    keeps its own."""

    def __init__(self, seconds: float, *, size: int = 1024, clock=time.monotonic):
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._tokens: dict[str, tuple[float, ApiToken]] = {}

    def get(self, key_hash: str) -> ApiToken | None:
        entry = self._tokens.get(key_hash)
        if entry is None:
            return None
        found_at, token = entry
        if self.clock() - found_at >= self.seconds:
            self._tokens.pop(key_hash, None)
            return None
        return token

    def put(self, key_hash: str, token: ApiToken) -> None:
        if len(self._tokens) >= self.size:
            self._tokens.clear()  # a bound, never reached by a deployment's handful of tokens
        self._tokens[key_hash] = (self.clock(), token)

    def clear(self) -> None:
        self._tokens.clear()


# Tokens used for the number check, kept 10 s (TokenCache says what that delays).
CHECK_TOKENS = TokenCache(10)


class TokenAuth(HttpBearer):
    """A bearer token allowed to do what ``scope`` names.

    Returns the token (as ``request.auth``; its user becomes ``request.user``).
    Refuses with 401 a missing, unknown, expired or revoked token and the
    token of an inactive user; with 403 a token whose user has none of the
    scope's roles, or which lacks the scope. Without a scope it refuses every
    token, so an operation that names none is closed. With a ``cache``, a
    token found in it is not looked up again (TokenCache says for how long).
    Records the token's use at most once a minute (USE_RECORDED_EVERY)."""

    def __init__(self, scope: str | None = None, *, cache: TokenCache | None = None):
        if scope is not None and scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}")
        self.scope = scope
        self.cache = cache
        super().__init__()

    def authenticate(self, request, token):
        found = self._find(token)
        if found is None:
            return None
        if self.scope is None:
            raise AuthorizationError(message="No scope opens this operation to tokens.")
        scope = SCOPES[self.scope]
        if not has_role(found.user, *scope.roles):
            raise AuthorizationError(
                message=f"Your role does not give access to this operation: it is for {_names(scope.roles)}."
            )
        if self.scope not in found.scopes:
            raise AuthorizationError(message=f"This token does not hold the scope {self.scope}.")
        _record_use(found)
        request.user = found.user
        return found

    def _find(self, key: str) -> ApiToken | None:
        if self.cache is None:
            return ApiToken.find(key)
        key_hash = ApiToken.hash(key)
        found = self.cache.get(key_hash)
        if found is None:
            found = ApiToken.find(key)
            if found is not None:
                has_role(found.user)  # reads the user's roles once, into the cached user
                self.cache.put(key_hash, found)
        elif found.expires_at <= timezone.now():
            return None
        return found


def _record_use(token: ApiToken) -> None:
    """Set the token's last use to now, unless it was set less than a minute ago."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < USE_RECORDED_EVERY:
        return
    # Conditional, so that workers that see the same stale time write once.
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - USE_RECORDED_EVERY)
    ApiToken.objects.filter(stale, id=token.id).update(last_used_at=now)
    token.last_used_at = now


def _names(roles: tuple[str, ...]) -> str:
    return ", ".join(roles[:-1]) + f" or {roles[-1]}" if len(roles) > 1 else roles[0]


def _scopes_table() -> str:
    rows = "\n".join(f"| `{s.name}` | {s.summary} | {_names(s.roles)} |" for s in SCOPES.values())
    return f"| scope | lets a token | for users who are |\n| --- | --- | --- |\n{rows}"


api = NinjaAPI(
    title="Answer review API",
    version="1",
    description=(
        "Upload runs of logged answers and read their automatic measures; grade a run with model "
        "graders (judge runs: estimate, confirm, follow, export); check an answer's numbers at the "
        "moment it is shown (`POST /api/check`).\n\n"
        "Send `Authorization: Bearer TOKEN`. A token acts as the user it belongs to, limited to its "
        "scopes, until it expires or is revoked; each operation needs its scope and one of the scope's "
        f"roles ({Role.REVIEWER}s have none). Missing or dead token: 401; "
        "role or scope short: 403. A token's last use is recorded to the minute. For speed, a server "
        f"process keeps a `check` token it has seen for {CHECK_TOKENS.seconds:g} s: revoking it, or "
        f"taking its user's role away, reaches `POST /api/check` within {CHECK_TOKENS.seconds:g} s "
        "(everything else at once).\n\n" + _scopes_table()
    ),
    auth=TokenAuth(),
    urls_namespace="api",
)


class ErrorOut(Schema):
    detail: str
    errors: list[str]


class DetailOut(Schema):
    detail: str


class InvalidOut(Schema):
    detail: list[dict]


# What any operation may answer besides its own statuses: 401 for a missing
# or dead token, 403 for a token short of role or scope, 422 for a request
# that does not fit the schema; an upload also 400 for a refused file (each
# problem named), 411 without Content-Length and 413 past the size limit.
REFUSALS = {401: DetailOut, 403: DetailOut, 422: InvalidOut}
UPLOAD_REFUSALS = {**REFUSALS, 400: ErrorOut, 411: ErrorOut, 413: ErrorOut}


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
    not_run: int
    stable: dict = Field(
        default={},
        description="with repeated attempts (R >= 2), per slice and measure: the stable count (questions "
        "passing every attempt), the passed-in-r-of-R distribution and the rate over attempts with a "
        "cluster-robust interval; empty for single runs",
    )
    timing: dict = Field(
        default={},
        description="spec 004 timing per slice: end-to-end time (n, mean, P50, nearest-rank P90), platform "
        "E2E as a proxy, named events, failures with their waiting time, tool calls by unique id",
    )
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
    imported_from: str = Field(default="", description="the tool and file a run was imported from")
    imported_scores: dict = Field(
        default={},
        description="an imported Inspect log's own scores, by scorer: n, how often each value was given, "
        "the mean of the numeric ones; never this app's measures",
    )
    sha256: str
    answers: int
    error: str
    line_errors: list[dict]
    line_error_count: int
    repetitions: int = Field(default=1, description="attempts per question (R) the log's header declared")
    repeats: int | None = Field(default=None, description="the run this one repeats, if linked")
    excluded_reason: str = Field(default="", description="why the run is left out of its version's figures")
    waiting: str = Field(
        default="",
        description="why the run has not started: empty, or 'queued, waiting for the broker' when the task "
        "queue was unreachable at upload (the app sends it on once it is back)",
    )
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
        "imported_from": run.imported_from,
        "imported_scores": run.imported_scores,
        "sha256": run.sha256,
        "answers": run.answer_count,
        "error": run.error,
        "line_errors": run.line_errors,
        "line_error_count": run.line_error_count,
        "repetitions": run.repetitions,
        "repeats": run.repeats_id,
        "excluded_reason": run.excluded_reason,
        "waiting": (
            "queued, waiting for the broker"
            if run.status == Run.Status.RECEIVED and not run.queued_at
            else ""
        ),
        "scorings": [
            {
                "id": s.id,
                "set_version": s.set_version.version,
                "status": s.status,
                "progress": s.progress,
                "error": s.error,
                "unmatched_answers": s.unmatched_answers,
                "not_run": s.not_run,
                "stable": s.stable,
                "timing": s.timing,
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
    response={201: RunOut, 200: RunOut, **UPLOAD_REFUSALS},
    summary="Upload a run log",
    auth=TokenAuth("runs:write"),
)
def upload_run(
    request,
    file: File[UploadedFile],
    assistant_version: Form[str] = "",
    set_version: Form[str] = "",
    set_from_file: Form[bool] = False,
    set_name: Form[str] = "",
    repeats: Form[int | None] = None,
):
    """Store the log and queue its validation and scoring. `repeats` names the
    earlier run (same assistant version, same set version) this one repeats;
    both stay in the version's record. 201 for a new run,
    200 with `duplicate: true` when the same file is held by a run already.
    Poll `GET /api/runs/{id}` until `status` is stored, rejected or failed and
    each scoring is done; a rejected run lists its bad lines.

    Versions are labels: ASCII letters, digits, `.`, `_`, `-` and `+`, up to 100
    characters. The file is UTF-8 JSON Lines, or that compressed with gzip;
    each line at most `REVIEWAPP_MAX_ANSWER_KB` (100 KB). 400 names each
    problem (the form field, or the file's line and field); 411 for a body
    sent without Content-Length; 413 past the size limit."""
    try:
        received = run_receive(
            upload=file,
            uploaded_by=request.user,
            source=Run.Source.API,
            assistant_version=assistant_version,
            set_version=set_version,
            set_from_file=set_from_file,
            set_name=set_name,
            repeats=repeats,
        )
    except UploadRejected as rejected:
        return _error(rejected)
    run = Run.objects.get(id=received.run.id)
    return Status(201 if received.created else 200, _run_out(request, run, duplicate=not received.created))


class ImportPreviewOut(Schema):
    format: str
    assistant_version: str = Field(description="the version the file suggests (Inspect: its model)")
    set_version: str = Field(description="the set version the file suggests (Inspect: task and version)")
    set_name: str
    fields: list[str] = Field(description="what the mapping can name: CSV columns, JSON keys, metadata keys")
    columns: dict[str, str] = Field(description="the mapping in use, defaults filled in")
    samples: int | None = Field(default=None, description="samples in the file, when known without reading")
    lines: list[dict] = Field(description="the first answers as run-log lines")
    errors: list[str] = Field(description="problems of those first answers, by sample or line and field")


@api.post(
    "/imports",
    response={201: RunOut, 200: RunOut | ImportPreviewOut, **UPLOAD_REFUSALS},
    summary="Import a run from an Inspect log, Ragas-style JSON Lines or CSV",
    auth=TokenAuth("runs:write"),
)
def import_run(
    request,
    file: File[UploadedFile],
    format: Form[str] = "",
    columns: Form[str] = "",
    assistant_version: Form[str] = "",
    set_version: Form[str] = "",
    set_name: Form[str] = "",
    language: Form[str] = "en",
    set_from_file: Form[bool] = True,
    preview: Form[bool] = False,
):
    """Convert another tool's file into a run log and take it as a run, as
    `POST /api/runs` takes one (201 for a new run, 200 with `duplicate: true`
    for a file held already; poll `GET /api/runs/{id}`).

    `format` is `inspect` (an Inspect AI eval log, `.eval` or `.json`),
    `ragas` (JSON Lines with user_input, retrieved_contexts, response,
    reference) or `csv`; empty, it is told from the file. `columns` maps the
    run log's fields to the file's columns or keys (Inspect: metadata keys),
    `field=column,...`, e.g. `retrieved_contexts=contexts`. An Inspect log
    names its versions (model; task and task version) unless the form does;
    Ragas and CSV files need both. With `set_from_file` (the default) the
    set version is created, or the named set revised, from the file's
    questions; without, the answers are scored against the existing set
    version. `preview=true` stores nothing and answers what the file would
    become: the versions and mapping in use and its first answers. 400 names
    every problem by sample or line and field; nothing is stored then."""
    try:
        mapping = imports.parse_mapping([columns]) if columns.strip() else {}
    except ValueError as error:
        return _error(UploadRejected(f"columns: {error}"))
    if problem := logfile.language_problem(language):
        return _error(UploadRejected(f"language: {problem}"))
    options = imports.ImportOptions(
        assistant_version=assistant_version.strip(),
        set_version=set_version.strip(),
        set_name=set_name,
        language=language,
        columns=mapping,
    )
    try:
        pending = pending_store(file, user=request.user, file_format=format.strip())
        try:
            if preview:
                shown = import_preview(pending, options)
                return Status(
                    200,
                    {
                        "format": shown.format,
                        "assistant_version": shown.assistant_version,
                        "set_version": shown.set_version,
                        "set_name": shown.set_name,
                        "fields": shown.fields,
                        "columns": shown.columns,
                        "samples": shown.samples,
                        "lines": shown.lines,
                        "errors": [str(error) for error in shown.errors],
                    },
                )
            received = import_receive(
                path=pending.path,
                name=pending.name,
                file_format=pending.format,
                options=options,
                set_from_file=set_from_file,
                uploaded_by=request.user,
                source=Run.Source.API,
            )
        finally:
            pending.path.unlink(missing_ok=True)
    except UploadRejected as rejected:
        return _error(rejected)
    run = Run.objects.get(id=received.run.id)
    return Status(201 if received.created else 200, _run_out(request, run, duplicate=not received.created))


@api.get(
    "/runs/{run_id}",
    response={200: RunOut, 404: DetailOut, **REFUSALS},
    summary="A run's status and scores",
    auth=TokenAuth("runs:read"),
)
def get_run(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("assistant_version", "set_version"), id=run_id)
    return _run_out(request, run)


@api.post(
    "/question-sets",
    response={201: SetVersionOut, **UPLOAD_REFUSALS},
    summary="Upload a question set version",
    auth=TokenAuth("sets:write"),
)
def upload_question_set(
    request,
    file: File[UploadedFile],
    version: Form[str] = "",
    set_name: Form[str] = "",
    qa_task: Form[Literal["", "open", "mc"]] = "",
    qa_columns: Form[str] = "",
    language: Form[str] = "en",
):
    """Create a question set version from a JSON Lines file (or that
    compressed with gzip). The version comes from `version`, the file's
    header line or its name (`questions_set-<version>.jsonl`). 400 names each
    problem; every line is checked before anything is stored.

    With `qa_task` (`open` or `mc`) the file is one of spec 001's QA
    datasets, JSON Lines or CSV: `qa_columns` names its columns
    (`question=Question,reference=Gold,id=qid`; `options=a+b+c` for one
    column per option), `language` is its questions' language. Each question
    keeps its reference answer (for multiple choice, the correct option as
    "B. Paris"), and the numbers in it become the expected values."""
    if problem := logfile.language_problem(language):
        return _error(UploadRejected(f"language: {problem}"))
    try:
        created = set_version_upload(
            upload=file,
            version=version,
            set_name=set_name,
            created_by=request.user,
            qa_task=qa_task,
            qa_columns=qa_columns,
            language=language,
        )
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


@api.get(
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
            max_p90_s=query.max_p90,
            max_timeout_rate=query.max_timeout_rate,
            judge=query.judge,
        )
    except GateRefused as refused:
        return Status(
            422, {"passed": False, "verdict": "cannot judge", "field": refused.field, "error": str(refused)}
        )
    return Status({0: 200, 1: 409, 2: 422}[verdict["exit_code"]], verdict)


# -- judge runs --------------------------------------------------------------


class JudgeRunIn(Schema):
    run_id: int = Field(description="the stored run whose answers the judges grade")
    judge_versions: list[int] = Field(
        min_length=1, description="ids of the judge versions that grade it (a panel: one or more)"
    )
    regrade_share: float = Field(
        default=0.1,
        gt=0,
        le=1,
        description="the share of answers people re-read blind (spec 002); at least 30 answers are drawn",
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
        "Krippendorff's alpha (interval) between them and whether it is below the 0.667 floor"
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


def _invalid(field: str, message: str):
    """422 naming ``field`` in the body, shaped like the API's own validation errors."""
    return Status(
        422, {"detail": [{"type": "value_error", "loc": ["body", "payload", field], "msg": message}]}
    )


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
        "panel": dashboard.panel_figures(judge_run) if judge_run.status != JudgeRun.Status.ESTIMATED else [],
        "head_to_head": dashboard.head_to_head(judge_run) if judge_run.other_run_id else [],
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
        "counts": selectors.judge_run_counts(judge_run),
        "error": judge_run.error,
        "links": links,
    }


@api.post(
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
    except UploadRejected as rejected:
        return _invalid("run_id", str(rejected))
    if payload.confirm:
        try:
            judge_run = judge_run_confirm(judge_run=judge_run, draw_regrade=regrade_draw)
        except UploadRejected as rejected:
            return Status(
                409, {"detail": f"judge run {judge_run.id} was estimated but not started: {rejected}"}
            )
    return Status(201, _judge_run_out(request, judge_run))


@api.post(
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
    except UploadRejected as rejected:  # the regrade sample could not be drawn: nothing started
        return Status(409, {"detail": f"not started: {rejected}"})
    return _judge_run_out(request, judge_run)


@api.post(
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


@api.get(
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
    kappa: float | None
    kappa_low: float | None = Field(description="Cohen's kappa, 95 % interval (statsmodels)")
    kappa_high: float | None
    alpha: float | None = Field(description="Krippendorff's alpha, nominal")
    errors: list[dict] = Field(description="the judge's errors in each direction, each with k and n")
    validated: bool
    missing: str = Field(description="which condition of validation is not met; empty when validated")


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


@api.get(
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
    from reviewapp.judges.services.validation import judge_validation, validation_title

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


@api.get(
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
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in selectors.judge_run_verdicts(judge_run))
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="judge-run-{judge_run.id}-verdicts.jsonl"'
    return response


# -- the number check --------------------------------------------------------

CHECK_MAX_ANSWERS = 1000
# A batch's body, at most: 1,000 answers of 16 KB, about two seconds of work.
# Longer answers (up to MAX_ANSWER_BYTES each) go in smaller batches.
CHECK_MAX_BODY_BYTES = 16 * 1024 * 1024
_CHECK_FIELDS = ("answer", "language", "retrieved_values", "expected_values", "options")
_CHECK_REQUIRED = ("answer", "language", "retrieved_values")
_CHECK_OPTIONS = ("rounding", "scale_words")


class CheckOptionsIn(Schema):
    model_config = ConfigDict(extra="forbid")

    rounding: bool = Field(
        default=False, description="7.6 is also supported by 7.62: a value rounded to the figure's precision"
    )
    scale_words: bool = Field(default=False, description='"1.2 million" also reads as 1,200,000')


class CheckAnswerIn(Schema):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field(description="the answer's text, at most 100 KB (102,400 bytes) in UTF-8")
    language: str = Field(
        description='its language ("en", "fr"…; may be empty): where "." groups thousands ("1.250" in '
        "French, Spanish, German…)"
    )
    retrieved_values: list[float] = Field(description="the values of the records retrieved for the answer")
    expected_values: list[float] = Field(
        default=[], description="the question's expected values, when a question set gives them"
    )
    options: CheckOptionsIn = Field(
        default_factory=CheckOptionsIn, description="matching rules, off by default"
    )


class CheckBatchIn(Schema):
    model_config = ConfigDict(extra="forbid")

    answers: list[CheckAnswerIn] = Field(
        min_length=1, max_length=CHECK_MAX_ANSWERS, description="1 to 1,000 answers, checked in order"
    )


class CheckedNumberOut(Schema):
    text: str = Field(description="the number as written")
    start: int = Field(description="where it starts in the answer, in characters (Unicode code points)")
    end: int = Field(description="where it ends: answer[start:end] is the text")
    readings: list[float | None] = Field(
        description='every value it can mean ("1,234": 1234 and 1.234); null for one too large for a float'
    )
    year: bool = Field(description="a year (1900 to 2100, four digits): read, never counted")
    counted: bool
    supported: bool | None = Field(description="null for a year")
    matched: float | None = Field(description="the retrieved or expected value that supports it")
    matched_in: Literal["retrieved", "expected"] | None


class CheckOut(Schema):
    verdict: Literal["supported", "unsupported", "no numbers"] = Field(
        description="unsupported when any counted number is; no numbers when none is counted"
    )
    numbers_counted: int = Field(description="n: the numbers stated, every occurrence, years left out")
    numbers_unsupported: int = Field(description="k: those no retrieved or expected value supports")
    numbers: list[CheckedNumberOut] = Field(description="every number read, years included, in order")


class CheckBatchOut(Schema):
    results: list[CheckOut] = Field(description="one per answer, in the order sent")
    answers_unsupported: int = Field(description="answers whose verdict is unsupported")


# Spec 000's running example, a03: 35 is unsupported, 2020 a year.
_CHECK_EXAMPLE = {
    "answer": "The under-five mortality rate was 35 per 1,000 live births in 2020 (HLTH_U5_MORT).",
    "language": "en",
    "retrieved_values": [41.0, 44.0],
}


def _inline_schema(adapter: TypeAdapter) -> dict:
    """The JSON schema with its definitions written in place, for a request
    body the view reads itself (ninja adds only what it parses to the
    schema's components)."""
    schema = adapter.json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rsplit("/", 1)[1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return inline(schema)


def _check_field(prefix: str, field: str, message: str):
    return _invalid(prefix + field, f"{prefix}{field} {message}")


def _check_one(item, prefix: str):
    """One answer's result as a dict, or a 422 naming the field (under ``prefix``)."""
    if not isinstance(item, dict):
        return _invalid(prefix.rstrip("."), f"{prefix.rstrip('.')} must be an object")
    for name in item:
        if name not in _CHECK_FIELDS:
            return _check_field(prefix, name, f"is not a field: an answer has {', '.join(_CHECK_FIELDS)}")
    for name in _CHECK_REQUIRED:
        if name not in item:
            return _check_field(prefix, name, "is required")
    options = item.get("options", {})
    if not isinstance(options, dict):
        return _check_field(prefix, "options", "must be an object")
    for name in options:
        if name not in _CHECK_OPTIONS:
            return _check_field(
                prefix, f"options.{name}", f"is not an option: the options are {', '.join(_CHECK_OPTIONS)}"
            )
    try:
        result = check_numbers(
            item["answer"],
            retrieved_values=item["retrieved_values"],
            language=item["language"],
            expected_values=item.get("expected_values", ()),
            rounding=options.get("rounding", False),
            scale_words=options.get("scale_words", False),
            max_answer_bytes=MAX_ANSWER_BYTES,
        )
    except CheckInputError as refused:
        field = f"options.{refused.field}" if refused.field in _CHECK_OPTIONS else refused.field
        return _check_field(prefix, field, str(refused).removeprefix(refused.field + " "))
    return result.as_dict()


def _json(body: dict) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), content_type="application/json; charset=utf-8")


@api.post(
    "/check",
    response={200: CheckOut | CheckBatchOut, **UPLOAD_REFUSALS},
    summary="Check the numbers of answers before they are shown",
    auth=TokenAuth("check", cache=CHECK_TOKENS),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": _inline_schema(TypeAdapter(CheckAnswerIn | CheckBatchIn)),
                    "examples": {
                        "one answer": {"value": _CHECK_EXAMPLE},
                        "a batch": {
                            "value": {
                                "answers": [
                                    _CHECK_EXAMPLE,
                                    {
                                        "answer": "Le taux de chômage était de 7,3 % (LAB_UNEMP_RATE_Q).",
                                        "language": "fr",
                                        "retrieved_values": [7.3, 7.4],
                                        "options": {"rounding": True},
                                    },
                                ]
                            }
                        },
                    },
                }
            },
        }
    },
)
def check_answers(request):
    """Spec 000's unsupported-numbers test on answers about to be shown: each
    number of the answer is read (dates, "per 1,000" denominators and record
    identifiers are not numbers; years are read but not counted) and is
    supported when one of the retrieved values (or, if given, the expected
    values) matches it — the scorer's own test, so the counts equal the
    run's. Withhold or flag what is unsupported; `start` and `end` place each
    number in the text. Nothing is stored.

    Send one answer, or `{"answers": [...]}` with 1 to 1,000 of them. 422
    names the field (`answers[3].retrieved_values[2]`): a value that is not
    a number (true, false, strings and null are not), an answer over 100 KB,
    a missing or unknown field, an empty batch or one of over 1,000 answers.
    400 for a body that is not JSON; 413 for a body over 16 MB."""
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if size > CHECK_MAX_BODY_BYTES:
        return Status(
            413,
            {
                "detail": "the request was refused",
                "errors": [
                    f"the body is larger than {CHECK_MAX_BODY_BYTES:,} bytes: send fewer answers per request"
                ],
            },
        )
    # read(), not .body: Django keeps bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) out of .body.
    raw = request.read()
    with _collection_paused():
        return _check_body(raw)


@contextlib.contextmanager
def _collection_paused():
    """Keep Python's cyclic garbage collector out of one check.

    A batch makes and drops thousands of dicts and lists (none in a cycle:
    reference counting frees them). Collections during the batch move those
    still in use into the old generation, and every few batches that sets
    off a full collection of the whole process, Django's objects included:
    80 ms added to one batch in five (bench/README.md). The pause is the
    process's: in a threaded worker other requests go without collection for
    the milliseconds of a check too, which costs them nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check_body(raw: bytes):
    """The response to a check's body: the results, or the refusal naming the field."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return Status(400, {"detail": "the body is not JSON", "errors": [str(error)]})
    if not isinstance(body, dict):
        message = 'the body must be an object: one answer, or {"answers": [...]}'
        return Status(422, {"detail": [{"type": "value_error", "loc": ["body", "payload"], "msg": message}]})
    if "answers" not in body:
        result = _check_one(body, "")
        return result if isinstance(result, Status) else _json(result)

    for name in body:
        if name != "answers":
            return _invalid(name, f'{name} is not a field: a batch is {{"answers": [...]}} alone')
    answers = body["answers"]
    if not isinstance(answers, list):
        return _invalid("answers", "answers must be a list of answers")
    if not answers:
        return _invalid("answers", "answers is empty: send 1 to 1,000 answers")
    if len(answers) > CHECK_MAX_ANSWERS:
        return _invalid(
            "answers",
            f"answers holds {len(answers):,} answers: send at most {CHECK_MAX_ANSWERS:,} per request",
        )
    results = []
    unsupported = 0
    for position, item in enumerate(answers):
        result = _check_one(item, f"answers[{position}].")
        if isinstance(result, Status):
            return result
        unsupported += result["verdict"] == "unsupported"
        results.append(orjson.dumps(result))  # written out at once, its dicts freed
    body = b'{"results":[%b],"answers_unsupported":%d}' % (b",".join(results), unsupported)
    return HttpResponse(body, content_type="application/json; charset=utf-8")
