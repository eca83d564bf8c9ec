"""Imports: runs from other tools' files (Inspect AI logs, Ragas-style JSON
Lines, lm-evaluation-harness samples, CSV), turned into this app's run log by scoring.imports and then
received like any uploaded run.

On the web an import has two steps: the file is kept as a pending import
(``pending_store``) and previewed with the versions and mapping the file
suggests; once the person confirms them, ``import_receive`` converts it and
creates the run. The pending file is kept in the file store (so that any web
host can confirm it), named by a signed key bound to its uploader, and a
sweep removes pending files older than a day.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from django.conf import settings
from django.core import signing
from django.core.files import File

from reviewapp.core import files
from reviewapp.core.errors import ApplicationError
from reviewapp.core.uploads import clean_file_name, store_upload
from reviewapp.models import Run
from reviewapp.runs.services.runs import Received, run_receive
from scoring import imports, logfile
from scoring.imports.lm_eval import FIELDS as LM_EVAL_FIELDS

logger = logging.getLogger(__name__)

FOLDER = "imports"
PENDING_MAX_AGE_S = 24 * 60 * 60
_SALT = "reviewapp.imports.pending"

# The fields a mapping can set, by format: an Inspect log gives question,
# answer, attempt and timing itself; its metadata may give the rest.
MAPPABLE = {
    "inspect": (
        "retrieved_contexts",
        "language",
        "cited_ids",
        "declined",
        "expected_behaviour",
        "expected_values",
        "stratum",
    ),
    "ragas": imports.TARGET_FIELDS,
    # An lm-eval sample: paths such as doc.question or resps[0][0].
    "lm-eval": LM_EVAL_FIELDS,
    "csv": imports.TARGET_FIELDS,
}

# The keys of a converted line that hold another tool's own scores.
SCORE_KEYS = ("inspect_scores", "lm_eval_scores")

# What a field of the run log is, for the mapping form.
FIELD_LABELS = {
    "question_id": "question id",
    "question": "question text",
    "language": "language",
    "answer": "answer",
    "retrieved_contexts": "retrieved evidence (passages or records)",
    "retrieved_ids": "retrieved identifiers",
    "retrieved_values": "retrieved values",
    "cited_ids": "cited identifiers",
    "declined": "declined (true/false)",
    "reference": "reference answer",
    "expected_values": "expected values",
    "expected_behaviour": "expected behaviour (answer/decline)",
    "stratum": "stratum",
    "attempt": "attempt",
}


# The "format" of a pending run log in this app's own form, kept while the
# revision of a set it asks for is confirmed (the upload page's second step).
RUN_LOG = "run"


@dataclass(frozen=True)
class Pending:
    """An uploaded file waiting for its import (or its revision of a set) to
    be confirmed; ``fields`` are the form's values it was sent with."""

    key: str
    # The file's name in the file store (reviewapp.core.files).
    stored: str
    name: str
    format: str
    fields: dict = field(default_factory=dict)


def _folder() -> Path:
    """This host's folder for files in transit (converted logs)."""
    folder = Path(settings.DATA_DIR) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _stored_name(key: str) -> str:
    return f"{FOLDER}/{Path(key).name}"


def pending_store(upload, *, user, file_format: str = "", fields: dict | None = None) -> Pending:
    """Keep an uploaded file for an import, its format named or sniffed, or
    (``file_format`` RUN_LOG) a run log whose set revision waits to be
    confirmed, with the form's ``fields``.

    Refuses (ApplicationError) what store_upload refuses (size, empty, wrong
    encoding), a file in none of the import formats (this app's own run log
    is uploaded on the upload page), and one that is not the format named."""
    name = clean_file_name(upload.name)
    stored = store_upload(upload, text=file_format == RUN_LOG)
    try:
        from scoring.imports import sniff

        detected = RUN_LOG if file_format == RUN_LOG else sniff.detect_format(stored.path, stored.name)
        if file_format == RUN_LOG:
            pass
        elif file_format:
            if file_format not in imports.FORMATS:
                raise ApplicationError(f"format: choose one of {', '.join(imports.FORMATS)}")
            if problem := sniff.format_problem(stored.path, stored.name, file_format):
                raise ApplicationError(f"{name}: {problem}")
        elif detected is None:
            raise ApplicationError(
                f"{name}: this is not an Inspect log, a Ragas-style JSON Lines file, lm-eval samples or a "
                "CSV file. "
                "A run log in this app's own format is uploaded on the upload page."
            )
        chosen = file_format or detected
        key = f"{uuid.uuid4().hex}{Path(stored.name).suffix[:10]}"
        try:
            files.put(_stored_name(key), stored.path)
        except files.StoreUnreachable as error:
            raise ApplicationError(
                f"{name}: {error}, so nothing was kept; send the file again in a moment", status=503
            ) from error
    except BaseException:
        stored.discard()
        raise
    fields = fields or {}
    signed = signing.dumps(
        {"key": key, "name": stored.name, "format": chosen, "user": user.pk, "fields": fields}, salt=_SALT
    )
    return Pending(key=signed, stored=_stored_name(key), name=stored.name, format=chosen, fields=fields)


def pending_open(signed: str, *, user) -> Pending:
    """The pending import a signed key names, for the user who uploaded it."""
    try:
        data = signing.loads(signed, salt=_SALT, max_age=PENDING_MAX_AGE_S)
    except signing.SignatureExpired as error:
        raise ApplicationError("This import waited more than a day; upload the file again.") from error
    except signing.BadSignature as error:
        raise ApplicationError("This import is not known here; upload the file again.") from error
    stored = _stored_name(data["key"])
    if data.get("user") != user.pk:
        raise ApplicationError("This import is not known here; upload the file again.")
    try:
        if not files.exists(stored):
            done = _done_marker(stored)
            if files.exists(done):
                raise AlreadyImported(int(files.read_bytes(done)))
            raise ApplicationError("This import is not known here; upload the file again.")
    except files.StoreUnreachable as error:
        raise ApplicationError(f"{error}; try again in a moment", status=503) from error
    return Pending(
        key=signed, stored=stored, name=data["name"], format=data["format"], fields=data.get("fields") or {}
    )


class AlreadyImported(Exception):
    """A pending import confirmed before (a second click): ``run_id`` holds it."""

    def __init__(self, run_id: int):
        self.run_id = run_id
        super().__init__(f"imported as run {run_id}")


def pending_done(pending: Pending, *, run_id: int) -> None:
    """Put the pending file away once its run exists, leaving a note of the
    run, so that the same confirmation sent again leads to it."""
    files.put_bytes(_done_marker(pending.stored), str(run_id).encode())
    files.delete(pending.stored)


def pending_drop(pending: Pending) -> None:
    """Remove a pending file that will not be imported (refused, or read
    once by the API)."""
    try:
        files.delete(pending.stored)
    except files.StoreUnreachable:
        logger.warning("could not remove %s; the sweep will", pending.stored, exc_info=True)


def _done_marker(stored: str) -> str:
    return f"{stored}.run"


@contextmanager
def pending_file(pending: Pending) -> Iterator[Path]:
    """The pending file on this host, for as long as the block runs."""
    try:
        with files.local_copy(pending.stored) as path:
            yield path
    except files.StoredFileMissing as error:
        raise ApplicationError("This import is not known here; upload the file again.") from error
    except files.StoreUnreachable as error:
        raise ApplicationError(f"{error}; try again in a moment", status=503) from error


def pending_sweep(*, max_age_s: int = PENDING_MAX_AGE_S) -> int:
    """Remove pending files (and the notes of confirmed ones) older than
    ``max_age_s``, and this host's files in transit that a stopped process
    left; the number removed."""
    removed = files.remove_older_than(FOLDER, max_age_s=max_age_s)
    if files.is_data_folder():
        return removed  # the folder just swept is this host's own
    cutoff = time.time() - max_age_s
    # Converted imports, and logs a killed worker was reading.
    for folder in (Path(settings.DATA_DIR) / FOLDER, Path(settings.DATA_DIR) / files.COPIES):
        for path in folder.glob("*"):
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def import_preview(pending: Pending, options: imports.ImportOptions) -> imports.Preview:
    """The file's first answers as they will be read, and what converting
    the whole of it gives (``checked``): the problems only later rows hold
    are added to ``errors``, so a preview that passes is not refused later."""
    with pending_file(pending) as path:
        try:
            shown = imports.preview(path, pending.format, options, name=pending.name)
        except logfile.LogFileError as error:
            raise _rejected(pending.name, error) from error
        shown.checked = imports.check(path, pending.format, options, name=pending.name)
    shown.errors += [error for error in shown.checked.errors if error not in shown.errors]
    return shown


def import_receive(
    *,
    path: Path,
    name: str,
    file_format: str,
    options: imports.ImportOptions,
    set_from_file: bool = True,
    revise_set: bool = False,
    revision_seen: str | None = None,
    uploaded_by=None,
    source: str = Run.Source.WEB,
) -> Received:
    """Convert an import file into a run log and receive it as a run.

    With ``set_from_file`` the question set version named in the options is
    created from the file's questions (or, with ``revise_set``, the named set
    revised), as for a log in the combined form; without, the answers are scored against the
    existing set version, and the file's expected values are set aside. The
    converted log is the same either way, so the same file imported again
    leads to the run that holds it.
    Refuses (ApplicationError) every problem of the file, each with its line
    or sample and field; nothing is stored then."""
    if file_format not in imports.FORMATS:
        raise ApplicationError(f"format: choose one of {', '.join(imports.FORMATS)}")
    converted = _folder() / f"converted-{uuid.uuid4().hex}.jsonl"
    try:
        try:
            with open(converted, "wb") as out:
                imports.convert(path, out, file_format, options, name=name)
        except logfile.LogFileError as error:
            raise _rejected(name, error) from error
        scores = _fit_for_upload(converted, name=name, unit=_unit(file_format))
        run_name = f"{Path(name).stem or 'import'}.jsonl"
        with open(converted, "rb") as stream:
            received = run_receive(
                upload=File(stream, name=run_name),
                uploaded_by=uploaded_by,
                source=source,
                assistant_version=options.assistant_version,
                set_version=options.set_version,
                set_from_file=set_from_file,
                set_name=options.set_name if set_from_file else "",
                revise_set=revise_set and set_from_file,
                revision_seen=revision_seen,
                # Against an existing set version, the expected values the
                # file carries are set aside: the set's are the ones scored.
                expected_ignored=not set_from_file,
            )
        if received.created:
            Run.objects.filter(id=received.run.id).update(
                imported_from=_imported_from(path, name, file_format),
                imported_scores=scores.summary(),
            )
            received.run.refresh_from_db()
        return received
    finally:
        converted.unlink(missing_ok=True)


IMPORTED_FROM_MAX_LENGTH = 255


def _imported_from(path: Path, name: str, file_format: str) -> str:
    """The tool and file a run came from, and, for a log whose run did not
    finish, its status and how much of its plan it holds (the preview's
    note), which the run page shows beside it; the file's name is cut
    before the note is."""
    source = f"{imports.FORMAT_LABELS[file_format].split(' (')[0]}: {name}"
    note = ""
    if file_format == "inspect":
        from scoring.imports import inspect_log

        note = inspect_log.log_note(path)
    if not note:
        return source[:IMPORTED_FROM_MAX_LENGTH]
    note = f" ({note})"[:IMPORTED_FROM_MAX_LENGTH]
    return source[: IMPORTED_FROM_MAX_LENGTH - len(note)] + note


def _unit(file_format: str) -> str:
    """What a converted line stands for: line 1 is the header, so line n+1 is
    the n-th sample of an Inspect log or row of a table, or the n-th answer
    of lm-eval samples (a document's generations are answers of their own)."""
    return {"inspect": "sample", "lm-eval": "answer"}.get(file_format, "row")


class ScoreSummary:
    """An imported tool's own scores over a run, by scorer: how often each
    value was given (C, I, true, a label), and for numbers their mean."""

    def __init__(self):
        self.scorers: dict[str, dict] = {}

    def add(self, scores) -> None:
        if not isinstance(scores, dict):
            return
        for scorer, score in scores.items():
            value = score.get("value") if isinstance(score, dict) else score
            entry = self.scorers.setdefault(str(scorer), {"n": 0, "values": {}, "numbers": 0, "sum": 0.0})
            entry["n"] += 1
            if isinstance(value, bool | str):
                label = str(value).lower() if isinstance(value, bool) else value[:40]
                entry["values"][label] = entry["values"].get(label, 0) + 1
            elif isinstance(value, int | float) and math.isfinite(value):
                entry["numbers"] += 1
                entry["sum"] += value

    def summary(self) -> dict:
        """{scorer: {"n", "values": {value: count}, "mean" (of the numbers), "numbers"}}."""
        return {
            scorer: {
                "n": entry["n"],
                "values": dict(sorted(entry["values"].items(), key=lambda item: -item[1])[:12]),
                "numbers": entry["numbers"],
                "mean": entry["sum"] / entry["numbers"] if entry["numbers"] else None,
            }
            for scorer, entry in self.scorers.items()
        }


def _fit_for_upload(path: Path, *, name: str, unit: str) -> ScoreSummary:
    """Check each converted line against the answer size limit, naming the
    sample or source row, and add up the imported tool's own scores."""
    limit = settings.MAX_ANSWER_BYTES
    errors = logfile.ErrorCollector(limit=200)
    scores = ScoreSummary()
    with open(path, "rb") as stream:
        for number, raw, _, oversize in logfile.iter_raw_lines(stream, max_line_bytes=limit):
            if oversize:
                message = (
                    f"the answer with its evidence is {oversize // 1024:,} KB as a run-log line, "
                    f"over the limit of {limit // 1024:,} KB"
                )
                errors.add([logfile.LineError(number - 1, None, message, unit=unit)])
            elif b'"inspect_scores"' in raw or b'"lm_eval_scores"' in raw:
                # Only the lines that hold another tool's scores are parsed.
                line = orjson.loads(raw)
                for key in SCORE_KEYS:
                    scores.add(line.get(key))
    if errors.total:
        raise _rejected(name, logfile.LogFileError(errors.errors, total=errors.total))
    return scores


def _rejected(name: str, error: logfile.LogFileError) -> ApplicationError:
    messages = [f"{name}: {line_error}" for line_error in error.errors]
    if error.total > len(error.errors):
        messages.append(f"{name}: and {error.total - len(error.errors)} more problems")
    return ApplicationError(messages)
