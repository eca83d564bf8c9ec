"""Runs: receiving an uploaded log, then validating and storing its answers."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from reviewapp import progress
from reviewapp.models import Answer, Assistant, AssistantVersion, Run, Scoring, SetVersion
from reviewapp.services.question_sets import set_version_from_combined_log
from reviewapp.services.scoring import queue_scoring
from reviewapp.services.uploads import UploadRejected, resolve_version, store_upload
from scoring import logfile

logger = logging.getLogger(__name__)

STORE_BATCH = 5000

# "assistant-1.3" is version 1.3 of "assistant"; a label without a version
# number names the assistant itself.
_ASSISTANT_NAME = re.compile(r"^(?P<name>.+?)[-_ ]v?\d[\w.\-]*$")


@dataclass(frozen=True)
class Received:
    run: Run
    created: bool


def assistant_version_get_or_create(*, label: str) -> AssistantVersion:
    label = label.strip()
    named = _ASSISTANT_NAME.match(label)
    assistant, _ = Assistant.objects.get_or_create(name=named["name"] if named else label)
    version, _ = AssistantVersion.objects.get_or_create(
        label=label, defaults={"assistant": assistant}
    )
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
) -> Received:
    """Take an uploaded run log: store it, name its versions, and queue its
    ingestion. The same file sent again leads to the run that holds it.

    Refuses (UploadRejected) a file over the size limit, one whose versions are
    missing or disagree, one naming an unknown set version, and a log in the
    combined form unless ``set_from_file`` asks to take the question set from it.
    """
    stored = store_upload(upload, folder="runs")
    try:
        existing = Run.objects.filter(sha256=stored.sha256).exclude(status=Run.Status.REJECTED)
        if run := existing.first():
            return Received(run, created=False)
        return _run_create(
            stored=stored,
            uploaded_by=uploaded_by,
            source=source,
            assistant_version=assistant_version,
            set_version=set_version,
            set_from_file=set_from_file,
            set_name=set_name,
        )
    finally:
        stored.path.unlink(missing_ok=True)


def _run_create(
    *, stored, uploaded_by, source, assistant_version, set_version, set_from_file, set_name
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
    combined = logfile.is_combined_form(stored.path)
    if combined and not set_from_file:
        raise UploadRejected(
            f"{stored.name}: the answers carry expected_behaviour and expected_values "
            "(the combined form). Expected values belong in the question set: choose "
            "“create or revise the question set from this file”, or upload the log without them."
        )
    if set_from_file and not combined:
        raise UploadRejected(
            f"{stored.name}: the answers carry no expected_behaviour and expected_values, "
            "so no question set can be taken from this file"
        )

    final_path = Path(settings.DATA_DIR) / "runs" / f"{stored.sha256}.jsonl"
    try:
        with transaction.atomic():
            if set_from_file:
                target_set = set_version_from_combined_log(
                    path=stored.path,
                    file_name=stored.name,
                    version=set_label,
                    set_name=set_name,
                    created_by=uploaded_by,
                )
            else:
                target_set = SetVersion.objects.filter(version=set_label).first()
                if target_set is None:
                    raise UploadRejected(
                        f"{stored.name}: set version {set_label} is not known here; "
                        "upload its question set first"
                    )
            run = Run.objects.create(
                assistant_version=assistant_version_get_or_create(label=assistant_label),
                set_version=target_set,
                file_name=stored.name,
                file_path=str(final_path),
                size_bytes=stored.size,
                sha256=stored.sha256,
                uploaded_by=uploaded_by,
                source=source,
            )
            stored.path.replace(final_path)
            transaction.on_commit(lambda: _queue_ingest(run.id))
    except IntegrityError:
        # The same file, sent twice at once: the other request holds it.
        run = Run.objects.filter(sha256=stored.sha256).exclude(status=Run.Status.REJECTED).first()
        if run is None:
            raise
        return Received(run, created=False)
    return Received(run, created=True)


def _queue_ingest(run_id: int) -> None:
    from reviewapp.tasks import ingest_run_task

    ingest_run_task.delay(run_id)


def run_ingest(*, run_id: int) -> Run | None:
    """Validate every line of a received run and store its answers in one
    transaction, then queue its scoring. Returns None when another worker
    has the run already (a repeated task is a no-op).

    A bad line rejects the run: its line errors are kept, no answer is.
    """
    claimed = Run.objects.filter(id=run_id, status=Run.Status.RECEIVED).update(
        status=Run.Status.INGESTING, progress=0
    )
    if not claimed:
        return None
    run = Run.objects.select_related("set_version").get(id=run_id)
    question_ids = set(run.set_version.questions.values_list("question_id", flat=True))

    def report(share: float) -> None:
        progress.report("run", run.id, percent=share * 100)

    try:
        with transaction.atomic():
            batch: list[Answer] = []
            count = 0
            for logged in logfile.read_answers(
                Path(run.file_path), question_ids=question_ids, progress=report
            ):
                record = logged.record
                batch.append(
                    Answer(
                        run=run,
                        line_number=logged.line,
                        question_id=record["question_id"],
                        language=record["language"],
                        declined=record["declined"],
                        raw=logged.text,
                    )
                )
                if len(batch) >= STORE_BATCH:
                    Answer.objects.bulk_create(batch)
                    count += len(batch)
                    batch.clear()
            Answer.objects.bulk_create(batch)
            count += len(batch)
            run.status = Run.Status.STORED
            run.progress = 100
            run.answer_count = count
            run.stored_at = timezone.now()
            run.save(update_fields=("status", "progress", "answer_count", "stored_at"))
            scoring = Scoring.objects.create(run=run, set_version=run.set_version)
            transaction.on_commit(lambda: queue_scoring(scoring.id))
    except logfile.LogFileError as error:
        run.status = Run.Status.REJECTED
        run.line_errors = [line_error.as_dict() for line_error in error.errors]
        run.line_error_count = error.total
        run.error = (
            f"{error.total} problem{'s' if error.total != 1 else ''} in the file; "
            "no answer was stored"
        )
        run.save(update_fields=("status", "line_errors", "line_error_count", "error"))
    except Exception as error:
        logger.exception("ingesting run %s failed", run.id)
        run.status = Run.Status.FAILED
        run.error = f"{type(error).__name__}: {error}"
        run.save(update_fields=("status", "error"))
    return run


def run_retry(*, run: Run) -> bool:
    """Queue a failed run's ingestion again; False when the run had not failed."""
    reset = Run.objects.filter(id=run.id, status=Run.Status.FAILED).update(
        status=Run.Status.RECEIVED, error="", progress=0
    )
    if reset:
        transaction.on_commit(lambda: _queue_ingest(run.id))
    return bool(reset)
