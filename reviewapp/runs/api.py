"""The API's runs and question sets: upload a run log or another tool's file,
follow a run, upload a question set."""

from __future__ import annotations

from typing import Literal

from django.shortcuts import get_object_or_404
from ninja import Field, File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from reviewapp.accounts.auth import TokenAuth
from reviewapp.core import broker
from reviewapp.core.api import REFUSALS, UPLOAD_REFUSALS, DetailOut
from reviewapp.core.errors import ApplicationError
from reviewapp.models import Answer, Question, Run, Scoring
from reviewapp.runs.selectors import (
    answer_follow_ups,
    run_clock,
    run_follow_up_counts,
    run_overhead_choice,
    run_warnings,
    set_version_warnings,
)
from reviewapp.runs.services.imports import (
    import_preview,
    import_receive,
    pending_drop,
    pending_file,
    pending_store,
)
from reviewapp.runs.services.question_sets import set_version_upload
from reviewapp.runs.services.runs import run_receive
from reviewapp.scorings import selectors
from reviewapp.scorings.api import ScoringOut
from scoring import imports, logfile, timing
from scoring.measures import not_applicable

router = Router()


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
        description="an imported Inspect log's own scores or lm-eval's per-sample metrics, by scorer or "
        "metric: n, how often each value was given, "
        "the mean of the numeric ones; never this app's measures",
    )
    sha256: str
    answers: int
    error: str
    line_errors: list[dict]
    line_error_count: int
    repetitions: int = Field(default=1, description="attempts per question (R) the log's header declared")
    repeats: int | None = Field(default=None, description="the run this one repeats, if linked")
    clock: dict = Field(
        default={"skew_ms": None, "precision_ms": None},
        description="the clocks the log's header stated (clock_skew_ms, clock_precision_ms) as skew_ms "
        "and precision_ms; null where not stated, never 0",
    )
    reply_policy: str | None = Field(
        default=None,
        description='the reply policy the log\'s header declared the assistant was called with, "direct" or '
        '"channel"; null when not declared',
    )
    overhead: dict = Field(
        default={"excluded": False, "chosen_by": None, "chosen_at": None},
        description="the recorded choice to leave channel overhead out of E2E: excluded, and who chose it "
        "(a lead's user name, or the pipeline from the header) and when; each scoring's e2e follows it",
    )
    excluded_reason: str = Field(default="", description="why the run is left out of its version's figures")
    waiting: str = Field(
        default="",
        description="why the run has not moved on: empty; 'queued, waiting for the broker' when the task "
        "queue was unreachable at upload (the app sends it on once it is back); or 'waiting for the "
        "scheduler' while its work is unfinished and neither Celery beat nor any worker has swept lately",
    )
    scorings: list[ScoringOut]
    follow_ups: dict = Field(
        default={"attempts": 0, "protocol": 0, "ad_hoc": 0, "resume": 0, "summary": ""},
        description="the multi-turn protocol: how many attempts took follow-ups (attempts), and of them "
        "how many took one by protocol, one ad hoc and one resume (an attempt may count in several), "
        "with the line pages show (summary)",
    )
    warnings: list[str] = Field(
        default=[],
        description="what the run's figures cannot show: a set version it is scored against holds no "
        "question expecting a decline, so refusal accuracy cannot tell an assistant that answers "
        "everything from a careful one",
    )


class AnswerOut(Schema):
    id: int
    question_id: str
    attempt: int
    status: str
    line_number: int
    turns: int = Field(default=1, description="the turns the attempt took (the multi-turn protocol)")
    follow_ups: list[dict] = Field(
        default=[],
        description="each follow-up sent, in order: text, kind (protocol, ad_hoc or resume) and label; "
        "logged_kind protocol when it was logged as protocol but is not the one the set declares",
    )
    follow_up_warnings: list[str] = Field(
        default=[],
        description="what did not fit the declared protocol: an ad hoc relabelling, turns over the max",
    )


class SetVersionOut(Schema):
    version: str
    question_set: str
    questions: int
    sealed: int = Field(default=0, description="questions in the sealed split")
    warnings: list[str] = Field(
        default=[], description="what figures on this set cannot show: no question expecting a decline"
    )


def _scores_out(scoring: Scoring) -> dict:
    """A scoring's figures, and the measures that apply to none of its questions."""
    if scoring.status != Scoring.Status.DONE:
        return {"scores": {}, "not_applicable": {}}
    scores = selectors.scores_as_dict(scoring)
    return {"scores": scores, "not_applicable": not_applicable(scores.get("all", {}))}


def _run_out(request, run: Run, *, duplicate: bool = False) -> dict:
    scorings = run.scorings.select_related("set_version").order_by("created_at", "id")
    overhead = run_overhead_choice(run)
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
        "clock": run_clock(run),
        "reply_policy": run.reply_policy or None,
        "overhead": overhead,
        "excluded_reason": run.excluded_reason,
        "waiting": _waiting(run),
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
                "e2e": {
                    name: timing.e2e_shown(summary, exclude_overhead=overhead["excluded"])
                    for name, summary in (s.timing or {}).items()
                },
                "options": s.options,
                "slice_fields": s.slice_fields,
                **_scores_out(s),
            }
            for s in scorings
        ],
        "follow_ups": run_follow_up_counts(run),
        "warnings": run_warnings(run),
    }


@router.post(
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
    revise_set: Form[bool] = False,
    repeats: Form[int | None] = None,
    seal_seed: Form[int | None] = None,
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
    sent without Content-Length; 413 past the size limit.

    With `set_from_file` (a log in the combined form) the set version holds
    the file's questions and nothing else, in a new set named `set_name`
    (empty: named after the set version). `revise_set=true` makes it a new
    version of the existing set `set_name` instead, its latest version's
    questions kept and the file's added or replacing them; naming an existing
    set without it is refused, saying what the revision would add, change and
    keep. With `seal_seed` a new set taken from the file has a stratified
    third of its questions, drawn with that seed, sealed (scoring.split)."""
    received = run_receive(
        upload=file,
        uploaded_by=request.user,
        source=Run.Source.API,
        assistant_version=assistant_version,
        set_version=set_version,
        set_from_file=set_from_file,
        set_name=set_name,
        revise_set=revise_set,
        repeats=repeats,
        seal_seed=seal_seed,
    )
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
    status: str = Field(default="", description="an Inspect log's status: success, started, cancelled, error")
    planned: int | None = Field(default=None, description="an Inspect log's planned samples x epochs")
    note: str = Field(
        default="",
        description="what an incomplete log holds of its plan, and what the import makes of the rest",
    )
    lines: list[dict] = Field(description="the first answers as run-log lines")
    errors: list[str] = Field(
        description="problems of the file, by sample or line and field: the whole file is checked "
        "as the import checks it (the first 200 listed)"
    )
    notes: list[str] = Field(default=[], description="how the file is read (lm-eval: how answers are chosen)")
    checked: dict[str, int] = Field(
        default={},
        description="the whole file converted as the import would: the lines it writes, and how many "
        "problems refuse it (0: the import will take it)",
    )


@router.post(
    "/imports",
    response={201: RunOut, 200: RunOut | ImportPreviewOut, **UPLOAD_REFUSALS},
    summary="Import a run from an Inspect log, Ragas-style JSON Lines, lm-eval samples or CSV",
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
    revise_set: Form[bool] = False,
    preview: Form[bool] = False,
):
    """Convert another tool's file into a run log and take it as a run, as
    `POST /api/runs` takes one (201 for a new run, 200 with `duplicate: true`
    for a file held already; poll `GET /api/runs/{id}`).

    `format` is `inspect` (an Inspect AI eval log, `.eval` or `.json`),
    `ragas` (JSON Lines with user_input, retrieved_contexts, response,
    reference), `lm-eval` (lm-evaluation-harness `--log_samples` output,
    `samples_<task>_<date>.jsonl`; its file name suggests the set version,
    and the assistant version is asked for) or `csv`; empty, it is told from
    the file. `columns` maps the
    run log's fields to the file's columns or keys (Inspect: metadata keys),
    `field=column,...`, e.g. `retrieved_contexts=contexts`. An Inspect log
    names its versions (model; task and task version) unless the form does;
    Ragas and CSV files need both. With `set_from_file` (the default) the
    set version is created from the file's questions and holds them alone,
    in a new set named `set_name` (empty: named after the set version), or,
    with `revise_set=true`, as a new version of the existing set `set_name`;
    without `set_from_file`, the answers are scored against the existing set
    version. `preview=true` stores nothing and answers what the file would
    become: the versions and mapping in use and its first answers. 400 names
    every problem by sample or line and field; nothing is stored then."""
    try:
        mapping = imports.parse_mapping([columns]) if columns.strip() else {}
    except ValueError as error:
        raise ApplicationError(f"columns: {error}") from error
    if problem := logfile.language_problem(language):
        raise ApplicationError(f"language: {problem}")
    options = imports.ImportOptions(
        assistant_version=assistant_version.strip(),
        set_version=set_version.strip(),
        set_name=set_name,
        language=language,
        columns=mapping,
    )
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
                    "status": shown.status,
                    "planned": shown.planned,
                    "note": shown.note,
                    "lines": shown.lines,
                    "errors": [str(error) for error in shown.errors],
                    "notes": shown.notes,
                    # The whole file converted as the import would: the lines
                    # it writes, or how many problems refuse it.
                    "checked": {"lines": shown.checked.lines, "problems": shown.checked.total},
                },
            )
        with pending_file(pending) as path:
            received = import_receive(
                path=path,
                name=pending.name,
                file_format=pending.format,
                options=options,
                set_from_file=set_from_file,
                revise_set=revise_set,
                uploaded_by=request.user,
                source=Run.Source.API,
            )
    finally:
        pending_drop(pending)
    run = Run.objects.get(id=received.run.id)
    return Status(201 if received.created else 200, _run_out(request, run, duplicate=not received.created))


@router.get(
    "/runs/{run_id}",
    response={200: RunOut, 404: DetailOut, **REFUSALS},
    summary="A run's status and scores",
    auth=TokenAuth("runs:read"),
)
def get_run(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("assistant_version", "set_version"), id=run_id)
    return _run_out(request, run)


@router.get(
    "/runs/{run_id}/answers/{answer_id}",
    response={200: AnswerOut, 404: DetailOut, **REFUSALS},
    summary="One attempt of a run, with its turns and follow-ups",
    auth=TokenAuth("runs:read"),
)
def get_answer(request, run_id: int, answer_id: int):
    answer = get_object_or_404(Answer, id=answer_id, run_id=run_id)
    return {
        "id": answer.id,
        "question_id": answer.question_id,
        "attempt": answer.attempt,
        "status": answer.status,
        "line_number": answer.line_number,
        "turns": answer.turns,
        "follow_ups": answer_follow_ups(answer),
        "follow_up_warnings": answer.follow_up_warnings,
    }


@router.post(
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
    seal_seed: Form[int | None] = None,
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
    "B. Paris"), and the numbers in it become the expected values.

    With `seal_seed` a random third of the questions, stratified by
    language, stratum and expected behaviour, is sealed and the rest are
    tuning, the same third `python -m scoring.split --seed` draws; a file
    that states any split is refused then. `sealed` says how many are."""
    if problem := logfile.language_problem(language):
        raise ApplicationError(f"language: {problem}")
    created = set_version_upload(
        upload=file,
        version=version,
        set_name=set_name,
        created_by=request.user,
        qa_task=qa_task,
        qa_columns=qa_columns,
        language=language,
        seal_seed=seal_seed,
    )
    return Status(
        201,
        {
            "version": created.version,
            "question_set": created.question_set.name,
            "questions": created.questions.count(),
            "sealed": created.questions.filter(split=Question.Split.SEALED).count(),
            "warnings": set_version_warnings(created),
        },
    )


def _waiting(run: Run) -> str:
    if run.status == Run.Status.RECEIVED and not run.queued_at:
        return "queued, waiting for the broker"
    unfinished = not run.is_final or run.scorings.exclude(status__in=Scoring.FINAL).exists()
    if unfinished and broker.swept_recently() is False:
        return "waiting for the scheduler"
    return ""
