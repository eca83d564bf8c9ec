"""Runs: receiving an uploaded log, then validating and storing its answers."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from reviewapp import tasks
from reviewapp.core import audit, files, progress, work
from reviewapp.core.bulk import insert_rows, refresh_statistics
from reviewapp.core.errors import ApplicationError
from reviewapp.core.uploads import resolve_version, store_upload
from reviewapp.models import Answer, Assistant, AssistantVersion, Question, Run, SetVersion
from reviewapp.runs import selectors
from reviewapp.runs.services.question_sets import set_version_from_combined_log
from reviewapp.scorings.services import queue_scoring, scoring_create
from scoring import logfile

logger = logging.getLogger(__name__)

# "assistant-1.3" is version 1.3 of "assistant"; a label without a version
# number names the assistant itself.
_ASSISTANT_NAME = re.compile(r"^(?P<name>.+?)[-_ ]v?\d[\w.\-]*$")


@dataclass(frozen=True)
class Received:
    run: Run
    created: bool


def assistant_version_get_or_create(*, label: str) -> AssistantVersion:
    """The assistant version with this label, made (with its assistant) when
    new. Refuses (ApplicationError) a label that breaks logfile.label_problem's
    rule: letters, digits, '.', '_', '-' and '+', up to 100 characters."""
    label = label.strip()
    if problem := logfile.label_problem(label):
        raise ApplicationError(f"assistant version: {problem}")
    named = _ASSISTANT_NAME.match(label)
    assistant, _ = Assistant.objects.get_or_create(name=named["name"] if named else label)
    version, _ = AssistantVersion.objects.get_or_create(label=label, defaults={"assistant": assistant})
    return version


def run_receive(
    *,
    upload,
    uploaded_by=None,
    source: str = Run.Source.WEB,
    assistant_version: str = "",
    set_version: str = "",
    set_from_file: bool = False,
    set_name: str = "",
    revise_set: bool = False,
    revision_seen: str | None = None,
    repeats: int | None = None,
    expected_ignored: bool = False,
    seal_seed: int | None = None,
) -> Received:
    """Take an uploaded run log: store it, name its versions, and queue its
    ingestion. The same file sent again leads to the run that holds it.

    Refuses (ApplicationError) a file over the size limit, one whose versions are
    missing or disagree, one naming an unknown set version, and a log in the
    combined form unless ``set_from_file`` asks to take the question set from
    it, or ``expected_ignored`` says its expected values are known to be set
    aside (an import scored against an existing set version). A set taken
    from the file holds its questions alone unless ``revise_set`` asks for a
    new version of the set named ``set_name`` (and, with ``revision_seen``,
    confirms the plan the user saw: set_version_from_combined_log). With
    ``seal_seed`` a seeded third of a new set taken from the file is sealed.
    """
    stored = store_upload(upload, refuse_other_tools=True)
    try:
        existing = Run.objects.filter(sha256=stored.sha256).exclude(status=Run.Status.REJECTED)
        if run := existing.first():
            # Sending the file again also sends stuck work on its way.
            if selectors.run_is_stuck(run):
                transaction.on_commit(lambda: tasks.queue_ingest(run.id))
            return Received(run, created=False)
        return _run_create(
            stored=stored,
            uploaded_by=uploaded_by,
            source=source,
            assistant_version=assistant_version,
            set_version=set_version,
            set_from_file=set_from_file,
            set_name=set_name,
            revise_set=revise_set,
            revision_seen=revision_seen,
            repeats=repeats,
            expected_ignored=expected_ignored,
            seal_seed=seal_seed,
        )
    finally:
        stored.discard()


def _run_create(
    *,
    stored,
    uploaded_by,
    source,
    assistant_version,
    set_version,
    set_from_file,
    set_name,
    revise_set=False,
    revision_seen=None,
    repeats=None,
    expected_ignored=False,
    seal_seed=None,
):
    sources = {
        "header": logfile.read_header(stored.path),
        "name_match": logfile.RUN_FILE_NAME.match(stored.name),
        "file_name": stored.name,
    }
    assistant_label = resolve_version(
        "assistant version", "assistant_version", given=assistant_version, **sources
    )
    set_label = resolve_version("set version", "set_version", given=set_version, **sources)
    combined = logfile.is_combined_form(stored.path, max_line_bytes=settings.MAX_ANSWER_BYTES)
    if combined and not set_from_file and not expected_ignored:
        raise ApplicationError(
            f"{stored.name}: the answers carry expected_behaviour and expected_values "
            "(the combined form). Expected values belong in the question set: choose "
            "“create or revise the question set from this file”, or upload the log without them."
        )
    if seal_seed is not None and not set_from_file:
        raise ApplicationError(
            "seal_seed: a third is sealed only of a question set taken from the file; "
            "seal an existing set's third when uploading that set"
        )
    if set_from_file and not combined:
        raise ApplicationError(
            f"{stored.name}: the answers carry no expected_behaviour and expected_values, "
            "so no question set can be taken from this file"
        )

    stored_name = run_log_name(stored.sha256)
    try:
        with transaction.atomic():
            if set_from_file:
                target_set = set_version_from_combined_log(
                    path=stored.path,
                    file_name=stored.name,
                    version=set_label,
                    set_name=set_name,
                    revise=revise_set,
                    seen=revision_seen,
                    created_by=uploaded_by,
                    seal_seed=seal_seed,
                )
            else:
                target_set = SetVersion.objects.filter(version=set_label).first()
                if target_set is None:
                    raise ApplicationError(
                        f"{stored.name}: set version {set_label} is not known here; "
                        "upload its question set first"
                    )
            version = assistant_version_get_or_create(label=assistant_label)
            repeated = None
            if repeats is not None:
                repeated = Run.objects.filter(
                    id=repeats, assistant_version=version, set_version=target_set
                ).first()
                if repeated is None:
                    raise ApplicationError(
                        f"{stored.name}: run {repeats} is not a run of {assistant_label} on set {set_label}; "
                        "a run can only repeat a run of the same assistant version on the same set version"
                    )
            run = Run.objects.create(
                repeats=repeated,
                assistant_version=version,
                set_version=target_set,
                file_name=stored.name,
                stored_name=stored_name,
                size_bytes=stored.size,
                sha256=stored.sha256,
                uploaded_by=uploaded_by,
                source=source,
            )
            # Last, inside the transaction: a store that cannot be reached
            # leaves no run behind, and the file can be sent again.
            try:
                files.put(stored_name, stored.path)
            except files.StoreUnreachable as error:
                raise ApplicationError(
                    f"{stored.name}: {error}, so nothing was stored; send the file again in a moment",
                    status=503,
                ) from error
            transaction.on_commit(lambda: tasks.queue_ingest(run.id))
    except IntegrityError:
        # The same file, sent twice at once: the other request holds it.
        run = Run.objects.filter(sha256=stored.sha256).exclude(status=Run.Status.REJECTED).first()
        if run is None:
            raise
        return Received(run, created=False)
    return Received(run, created=True)


def _drop_rejected_log(run: Run) -> None:
    """A rejected file is fixed and sent again, never read again: remove it
    from the store (a 1 MB gzip can unpack to a 1 GB log), unless a run
    that was not rejected holds the same file."""
    kept = Run.objects.filter(stored_name=run.stored_name).exclude(status=Run.Status.REJECTED).exists()
    if kept:
        return
    try:
        files.delete(run.stored_name)
    except (files.StoreUnreachable, files.StoredFileMissing) as error:
        logger.warning("could not remove the rejected log %s: %s", run.stored_name, error)


def run_ingest(*, run_id: int) -> Run | None:
    """Validate every line of a received run and store its answers, in one
    pass and one transaction, then queue its scoring. Returns None when
    another worker has the run already (a repeated task is a no-op).

    A bad line rejects the run: its line errors are kept, no answer is. The
    claim is leased: a worker that dies mid-way leaves the run to the next
    claim once the lease runs out, and its transaction, rolled back, leaves
    no answer behind. A transient database error gives the claim back and is
    raised, for the task to retry.
    """
    attempt = work.claim(
        Run, pk=run_id, waiting=Q(status=Run.Status.RECEIVED), working=Run.Status.INGESTING, progress=0
    )
    if attempt is None:
        return None
    try:
        # Read inside the try: a cut right after the claim gives it back too.
        run = Run.objects.select_related("set_version").get(id=run_id)
        with work.lease_kept(Run, pk=run.id, attempt=attempt), transaction.atomic(), ExitStack() as stack:
            # The fence: a worker whose lease ran out while it was still alive
            # finds the run taken by the next attempt and writes nothing.
            if (
                not Run.objects.select_for_update()
                .filter(id=run.id, attempts=attempt, status=Run.Status.INGESTING)
                .exists()
            ):
                return None
            # Every line's attempt is checked against the header's repetitions.
            log = stack.enter_context(files.local_copy(run.stored_name))
            plan, header_errors = logfile.read_plan(log)
            collector = logfile.ErrorCollector(limit=200)
            collector.add(header_errors)
            # The line of each attempt of each question of the set.
            seen = logfile.AttemptBook(
                repetitions=plan.repetitions, question_ids=_question_ids(run.set_version_id)
            )
            # The follow-up each question declares, to label each attempt's by.
            declared = dict(
                run.set_version.questions.filter(follow_up__isnull=False).values_list(
                    "question_id", "follow_up"
                )
            )
            links: list[tuple[int, str, int]] = []
            count = insert_rows(
                Answer,
                (
                    "run_id",
                    "line_number",
                    "question_id",
                    "attempt",
                    "status",
                    "language",
                    "declined",
                    "turns",
                    "follow_ups",
                    "follow_up_warnings",
                    "raw",
                ),
                _answer_rows(
                    run, log, seen, collector, declared, repeats_a_run=plan.repeats is not None, links=links
                ),
            )
            # The scoring plans its chunks from these answers next.
            refresh_statistics(Answer)
            repeats_ref = "" if plan.repeats is None else str(plan.repeats)
            repeated = run.repeats or _repeated_run(run, repeats_ref=repeats_ref)
            if links:
                collector.add(
                    _attempt_link_errors(run=run, repeats_ref=repeats_ref, repeated=repeated, links=links)
                )
            if not count and not collector.total:
                collector.add([logfile.LineError(1, None, "the file holds no answers")])
            collector.raise_if_any()  # rolls back every row written
            run.status = Run.Status.STORED
            run.progress = 100
            run.answer_count = count
            run.stored_at = timezone.now()
            run.lease_until = None
            run.repetitions = plan.repetitions
            run.timeout_s = plan.timeout_s
            run.clock_skew_ms = plan.clock_skew_ms
            run.clock_precision_ms = plan.clock_precision_ms
            run.reply_policy = plan.reply_policy or ""
            if plan.exclude_overhead and run.overhead_excluded_at is None:
                run.overhead_excluded_at, run.overhead_excluded_by = timezone.now(), None
            run.repeats_ref = repeats_ref
            run.repeats = repeated
            run.save(
                update_fields=(
                    "status",
                    "progress",
                    "answer_count",
                    "stored_at",
                    "lease_until",
                    "repetitions",
                    "timeout_s",
                    "clock_skew_ms",
                    "clock_precision_ms",
                    "reply_policy",
                    "overhead_excluded_at",
                    "overhead_excluded_by",
                    "repeats_ref",
                    "repeats",
                )
            )
            scoring = scoring_create(run=run, set_version=run.set_version)
    except logfile.LogFileError as error:
        run.status = Run.Status.REJECTED
        run.line_errors = [line_error.as_dict() for line_error in error.errors]
        run.line_error_count = error.total
        run.error = (
            f"{error.total} problem{'s' if error.total != 1 else ''} in the file; no answer was stored"
        )
        run.lease_until = None
        run.save(update_fields=("status", "line_errors", "line_error_count", "error", "lease_until"))
        _drop_rejected_log(run)
    except files.StoredFileMissing as error:
        Run.objects.filter(id=run_id, attempts=attempt).update(
            status=Run.Status.FAILED,
            error=f"The uploaded log is gone from the file store ({error}): upload the file again.",
            lease_until=None,
        )
        run = Run.objects.get(id=run_id)
    except Exception as error:
        if work.is_transient(error):
            work.release(Run, pk=run_id, attempt=attempt, waiting=Run.Status.RECEIVED)
            raise
        logger.exception("ingesting run %s failed", run_id)
        Run.objects.filter(id=run_id, attempts=attempt).update(
            status=Run.Status.FAILED, error=f"{type(error).__name__}: {error}", lease_until=None
        )
        run = Run.objects.get(id=run_id)
    else:
        transaction.on_commit(lambda: queue_scoring(scoring.id))
    return run


def run_log_name(sha256: str) -> str:
    """A run log's name in the file store: its content's sha256."""
    return f"runs/{sha256}.jsonl"


def _question_ids(set_version_id: int) -> Iterable[str]:
    """The set version's question ids, read as one text joined by line ends
    (ids are printable: none holds one), which took a million ids from 0.7 s
    to a fraction; by the rows if the count says an id was split (through the
    ORM's iterator a million took 1.8 s, at the start of every run stored
    against that set)."""
    table = connection.ops.quote_name(Question._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"SELECT count(*), string_agg(question_id, %s) FROM {table} WHERE set_version_id = %s",
                ["\n", set_version_id],
            )
            count, joined = cursor.fetchone()
            ids = joined.split("\n") if joined else []
            if len(ids) == count:
                return ids
        cursor.execute(f"SELECT question_id FROM {table} WHERE set_version_id = %s", [set_version_id])
        return [row[0] for row in cursor.fetchall()]


def _answer_rows(
    run: Run,
    log: Path,
    seen: logfile.AttemptBook,
    collector,
    declared: dict[str, dict],
    *,
    repeats_a_run: bool,
    links: list,
) -> Iterator[tuple]:
    """Rows for the answers table, one per attempt, validating as they go;
    after the first bad line nothing more is yielded, but every line is still
    checked, and at the end each question's attempts for gaps. Each valid
    line naming the attempt it repeats goes into ``links`` as (line,
    question_id, repeats_attempt), to be checked against the repeated run.
    Follow-ups are labelled against the one ``declared`` for their question."""
    size = max(run.size_bytes, 1)
    limit = settings.MAX_ANSWER_BYTES
    with open(log, "rb") as stream:
        for number, raw, position, oversize in logfile.iter_raw_lines(stream, max_line_bytes=limit):
            if number % 20000 == 0:
                progress.report("run", run.id, percent=100 * position / size)
            if oversize:
                collector.add([logfile.line_too_long(number, oversize, limit)])
                continue
            if raw.isspace():
                continue
            fields, errors = logfile.stored_fields(number, raw, seen, repeats_a_run=repeats_a_run)
            if errors and number == 1 and _is_header(raw):
                continue
            if errors:
                collector.add(errors)
                continue
            if fields.repeats_attempt is not None:
                links.append((number, fields.question_id, fields.repeats_attempt))
            if not collector.total:
                turns, follow_ups, warnings = logfile.label_follow_ups(
                    fields.record or {}, declared.get(fields.question_id)
                )
                yield (
                    run.id,
                    number,
                    fields.question_id,
                    fields.attempt,
                    fields.status,
                    fields.language,
                    fields.declined,
                    turns,
                    follow_ups,
                    warnings,
                    raw.decode("utf-8").removeprefix("\ufeff").rstrip("\r\n"),
                )
    collector.add(seen.gap_errors())


def _is_header(raw: bytes) -> bool:
    record, _ = logfile.parse_object(1, logfile._decode(raw))
    return record is not None and logfile.is_header(record)


def run_retry(*, run: Run) -> bool:
    """Queue a run's ingestion again, with its attempts counted afresh, when
    it failed or is stuck (see selectors.run_is_stuck); False otherwise."""
    run.refresh_from_db()
    if run.status != Run.Status.FAILED and not selectors.run_is_stuck(run):
        return False
    if work.held_by_a_transaction(Run, run.id):
        return False  # a worker's transaction holds it: moving, not stuck (and the page must not wait)
    reset = Run.objects.filter(id=run.id, status=run.status, attempts=run.attempts).update(
        status=Run.Status.RECEIVED, error="", progress=0, attempts=0, lease_until=None
    )
    if reset:
        transaction.on_commit(lambda: tasks.queue_ingest(run.id))
    return bool(reset)


# Links checked against the repeated run's answers this many questions at a time.
LINK_BATCH = 1000


def _attempt_link_errors(
    *, run: Run, repeats_ref: str, repeated: Run | None, links: list[tuple[int, str, int]]
) -> Iterator[logfile.LineError]:
    """An error for each line of ``links`` (line, question_id, attempt) that
    does not name an attempt the repeated run planned and that failed: one
    it logged with a status other than "ok", or one it did not run (spec
    004: an extra run is linked to the attempt it repeats, and only a failed
    attempt is run again; the original receipt stays)."""
    field = "repeats_attempt"
    if repeated is None or repeated.status != Run.Status.STORED:
        problem = (
            f"the header's repeats names run {repeats_ref}, which is not a stored run of "
            f"{run.assistant_version.label} on set {run.set_version.version}: "
            "there is no attempt of it to repeat"
        )
        yield from (logfile.LineError(number, field, problem) for number, _, _ in links)
        return
    for start in range(0, len(links), LINK_BATCH):
        batch = links[start : start + LINK_BATCH]
        answered = {
            (question_id, attempt): line
            for question_id, attempt, line in Answer.objects.filter(
                run=repeated,
                status=Answer.Status.OK,
                question_id__in={question_id for _, question_id, _ in batch},
            ).values_list("question_id", "attempt", "line_number")
        }
        for number, question_id, attempt in batch:
            if attempt > repeated.repetitions:
                yield logfile.LineError(
                    number,
                    field,
                    f"run {repeated.id} planned {repeated.repetitions} attempt"
                    f"{'s' if repeated.repetitions != 1 else ''} of each question: "
                    f"it has no attempt {attempt}",
                )
            elif (line := answered.get((question_id, attempt))) is not None:
                yield logfile.LineError(
                    number,
                    field,
                    f"attempt {attempt} of {question_id} in run {repeated.id} was answered (status ok, "
                    f"line {line}): only an attempt that failed, timed out, was cancelled or refused, "
                    "or was not run is repeated",
                )


def _repeated_run(run: Run, *, repeats_ref: str | None = None) -> Run | None:
    """The run named by the header's ``repeats`` (``repeats_ref``, the run's
    own by default), when it is a run of the same assistant version on the
    same set version."""
    repeats_ref = run.repeats_ref if repeats_ref is None else repeats_ref
    if not repeats_ref.isdigit():
        return None
    return (
        Run.objects.filter(
            id=int(repeats_ref), assistant_version=run.assistant_version, set_version=run.set_version
        )
        .exclude(id=run.id)
        .first()
    )


def run_exclude(*, run: Run, reason: str, excluded_by) -> Run:
    """Leave a run out of its version's figures; refuses an empty reason. The
    run stays, listed with the reason, who and when, on its version's
    dashboard."""
    reason = reason.strip()
    if not reason:
        raise ApplicationError("say why the run is left out: the reason is shown beside it on the dashboard")
    Run.objects.filter(id=run.id).update(
        excluded_reason=reason, excluded_by=excluded_by, excluded_at=timezone.now()
    )
    audit.record(run, {"excluded_reason": (run.excluded_reason, reason)})
    run.refresh_from_db()
    return run


def run_overhead_choose(*, run: Run, exclude: bool, chosen_by) -> Run:
    """Record whether the run's E2E leaves channel overhead out (spec 004:
    record and exclude that overhead), with who chose and when; choosing
    to include it clears both. The scorings keep E2E both ways, so the
    figures shown follow the choice without scoring again."""
    if exclude:
        Run.objects.filter(id=run.id).update(
            overhead_excluded_at=timezone.now(), overhead_excluded_by=chosen_by
        )
    else:
        Run.objects.filter(id=run.id).update(overhead_excluded_at=None, overhead_excluded_by=None)
    run.refresh_from_db()
    return run


def run_include(*, run: Run) -> Run:
    """Count an excluded run in its version's figures again."""
    Run.objects.filter(id=run.id).update(excluded_reason="", excluded_by=None, excluded_at=None)
    audit.record(run, {"excluded_reason": (run.excluded_reason, "")})
    run.refresh_from_db()
    return run
