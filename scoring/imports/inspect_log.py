"""Inspect AI eval logs as this app's run log, read with Inspect's own reader.

An Inspect log comes in three layouts, all read here:

- a finished ``.eval`` file: a zip holding header.json, summaries.json and
  one samples/<id>_epoch_<epoch>.json per sample (and the journal it was
  written through);
- an interrupted ``.eval`` file, whose run stopped before it finished: only
  the journal (_journal/start.json, _journal/summaries/<n>.json) and the
  samples flushed so far, no header.json; its status is "started";
- a ``.json`` file: the whole log as one JSON document.

A .eval log is read sample by sample (its header lists the samples of a
finished run, Inspect's sample summaries those of any other; Inspect then
reads them a batch at a time), so its size does not matter. Inspect reads
a .json log whole, whatever function is asked, so a .json log over
JSON_MAX_BYTES is refused with the command that turns it into a .eval log.
``attachment://`` references (content Inspect stored once and referred
to) are resolved by Inspect's reader. Format versions 1 to 3 are read
(KNOWN_VERSIONS); a log in Inspect's chunked layout (a folder per sample,
from ``inspect log convert-chunked``) is read through Inspect's public
reader when the installed Inspect can, and refused by name when not.

What each sample becomes (one line of the combined form of spec 000):

- question_id: the sample's id (as text); attempt: its epoch, and the
  header's repetitions the log's epochs;
- question: the input, or the text of its last user message; a
  multiple-choice sample's options (``choices``) follow it, one a line
  after its letter ("A. Lyon"), as spec 001 asks the question;
- reference: the target (several joined by " | "), a multiple-choice
  target as the option it names ("B. Paris"); expected_values: the
  numbers in the target other than years, none for a multiple-choice
  target; expected_behaviour "answer";
- answer: the model's completion;
- submitted_at/received_at: the sample's start and end (stopped_at when it
  failed), latency_ms its total time;
- status "error" for a sample an error halted, "timeout" for one a time or
  working limit halted, "cancelled" for one the operator stopped and
  "error" for any other limit (token, message, cost...), each with its
  status_reason; a failed sample has no answer;
- inspect_scores: Inspect's own scores, kept apart from this app's measures;
- a log whose run did not finish (status "started", "cancelled" or "error")
  holds only the samples that ended: each (id, epoch) its header planned
  and it does not hold becomes a "cancelled" attempt with no answer, after
  the samples, so that every measure's N is the whole plan (the question
  of such an attempt is the sample's id only; what it expects is in the
  sample the log lacks). Preview tells the log's status, and how many
  samples it planned and holds;
- evidence and the other fields from the sample's metadata, under the keys
  ``ImportOptions.columns`` names (run-log field -> metadata key, a dotted
  path for nested metadata; see inspect_sample.FIELDS and default_columns).

This module opens a log and converts it; scoring.imports.inspect_sample
makes each sample a line.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import math
import multiprocessing
import os
import re
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from scoring.imports.common import ImportOptions, Preview
from scoring.imports.inspect_sample import (
    _FILE,
    _MISSING,
    _check_options,
    _sample_errors,
    default_columns,
    inspect_scores,
    json_safe,
    metadata_fields,
    not_run_line,
    question_text,
    suggested_versions,
)
from scoring.logfile import (
    MAX_REPETITIONS,
    ErrorCollector,
    LineError,
    LogFileError,
    answer_errors,
    question_errors,
)

INSTALL = "pip install '.[inspect]'"

# The log format versions Inspect writes: 1 (until 0.3.x of mid-2024, one
# "score" per sample), 2 (a "scores" mapping) and 3 (Inspect 0.3.195 to
# 0.3.199 with INSPECT_LOG_FORMAT_V3, and the chunked converter: only how the
# transcript is stored changed, which an import never reads). A later version
# may change what a field means, so it is refused even when Inspect's reader
# reads it.
KNOWN_VERSIONS = (1, 2, 3)

# Inspect's .json reader holds the whole log in memory, as parsed objects
# several times its size on disk.
JSON_MAX_BYTES = 256 * 1024 * 1024

# Samples read at a time from a .eval log, and held in memory together.
BATCH_SAMPLES = 200


def _file_error(message: str, field: str | None = None) -> LogFileError:
    return LogFileError([LineError(0, field, message, unit=_FILE)])


def _inspect():
    """inspect_ai.log, or a LogFileError saying how to install it."""
    try:
        import inspect_ai.log as inspect_log
    except ImportError as error:
        raise _file_error(
            f"reading an Inspect AI log needs the inspect_ai package, which is not installed "
            f"({error}): install it with {INSTALL}"
        ) from error
    return inspect_log


# -- opening a log ----------------------------------------------------------


@dataclass
class _Log:
    """An Inspect log opened: its header (an EvalLog without samples), the
    (id, epoch) of each sample it holds in reading order, and how to read
    them."""

    path: Path
    format: str
    header: Any
    keys: list[tuple[int | str, int]]
    samples: list | None = None  # a .json log's, read whole
    # Samples in Inspect's chunked layout, which only Inspect's public
    # reader knows how to put together.
    chunked: bool = False

    @property
    def repetitions(self) -> int:
        configured = self.header.eval.config.epochs
        return max(configured or 1, max((epoch for _, epoch in self.keys), default=1))

    @functools.cached_property
    def planned(self) -> list[tuple[int | str, int]] | None:
        """Every (id, epoch) the run set out to make, in Inspect's order: the
        samples the run selected (the header's dataset ids) in each epoch;
        None when the header does not list them."""
        sample_ids = self.header.eval.dataset.sample_ids
        if sample_ids is None:
            return None
        return [(sample_id, epoch) for epoch in range(1, self.repetitions + 1) for sample_id in sample_ids]

    @functools.cached_property
    def not_run(self) -> list[tuple[int | str, int]]:
        """The planned (id, epoch) that a run which did not finish (status
        started, cancelled or error) left out of its log; none for a
        finished log, which holds what it ran."""
        if self.header.status not in INCOMPLETE or self.planned is None:
            return []
        present = {(str(sample_id), epoch) for sample_id, epoch in self.keys}
        return [key for key in self.planned if (str(key[0]), key[1]) not in present]

    def note(self) -> str:
        """What an incomplete log holds of its plan, and what its import makes
        of the rest; empty for a finished log."""
        status = self.header.status
        if status not in INCOMPLETE:
            return ""
        present = len(self.keys)
        if self.planned is None:
            return (
                f"the log's status is {status}: {_count(present, 'sample')} present, and the log does "
                "not list the samples it planned, so those not run cannot be counted"
            )
        ids = len(self.header.eval.dataset.sample_ids)
        plan = f"{_count(ids, 'sample')} x {_count(self.repetitions, 'epoch')}"
        if not self.not_run:
            return (
                f"the log's status is {status}: all {len(self.planned)} planned samples are present ({plan})"
            )
        return (
            f"the log's status is {status}: {present} of the {len(self.planned)} planned samples are "
            f"present ({plan}); the {len(self.not_run)} not run are imported as cancelled attempts, "
            "counted in N"
        )

    def read(self, count: int | None = None) -> Iterator[tuple[Any, Exception | None]]:
        """(sample, None) for each of the first ``count`` samples (all by
        default) in order, attachments resolved; (None, the error) for a
        sample Inspect could not read."""
        keys = self.keys if count is None else self.keys[:count]
        if self.samples is not None:
            for sample in self.samples[: len(keys)]:
                yield sample, None
            return
        with _sample_reader(self.path, public=self.chunked) as read_batch:
            for start in range(0, len(keys), BATCH_SAMPLES):
                batch = keys[start : start + BATCH_SAMPLES]
                try:
                    samples = read_batch(batch)
                except Exception:
                    # One bad sample fails its batch: read them one by one to tell which.
                    for key in batch:
                        try:
                            yield read_batch([key])[0], None
                        except Exception as error:
                            yield None, error
                    continue
                yield from ((sample, None) for sample in samples)


# The statuses of a log whose run did not finish: interrupted (killed, its
# journal alone), cancelled, or stopped by an error.
INCOMPLETE = ("started", "cancelled", "error")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


# Sample fields the conversion never reads (Inspect's own exclude_fields
# names them the same way).
UNUSED_SAMPLE_FIELDS = ("messages", "events", "events_data", "store", "timelines")


@contextmanager
def _sample_reader(path: Path, *, public: bool = False) -> Iterator[Callable[[list], list]]:
    """A function reading a batch of a .eval log's samples by (id, epoch),
    each validated as Inspect's EvalSample with its attachments resolved.

    Inspect's public readers open the zip again for every call, or go
    through an async stack that costs four times the sample's own parsing;
    so, when this Inspect has them, the samples are read from one open zip
    (Inspect's import has taught zipfile its zstd members) with Inspect's
    own member names, model, deserialising context and read-time
    resolution. Otherwise, and with ``public``, Inspect's public
    read_eval_log_samples_by_id."""
    inspect_log = _inspect()
    location = str(path)
    try:
        if public:
            raise ImportError("the public reader is asked for")
        from inspect_ai._util.constants import get_deserializing_context
        from inspect_ai.log._file import _resolve_sample_for_read
        from inspect_ai.log._recorders.eval import _sample_filename
    except ImportError:

        def read_each(batch: list) -> list:
            return inspect_log.read_eval_log_samples_by_id(
                location, batch, resolve_attachments=True, format="eval"
            )

        yield read_each
        return

    context = get_deserializing_context()
    model = inspect_log.EvalSample

    with zipfile.ZipFile(path) as archive:

        def read_open(batch: list) -> list:
            samples = []
            for sample_id, epoch in batch:
                try:
                    raw = archive.read(_sample_filename(sample_id, epoch))
                except KeyError as error:
                    raise IndexError(f"Sample id {sample_id} for epoch {epoch} not found") from error
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    # Inspect writes a NaN score as NaN, which only Python's json reads.
                    data = json.loads(raw)
                # What an import never reads, and what costs most to validate
                # and bind: the transcript (messages, events) and the store.
                for unused in UNUSED_SAMPLE_FIELDS:
                    data.pop(unused, None)
                sample = model.model_validate(data, context=context)
                # Only a sample with attachments has references to resolve
                # (the transcript, which binds to timelines, is dropped above).
                samples.append(_resolve_sample_for_read(sample, "full") if sample.attachments else sample)
            return samples

        yield read_open


def _sort_key(key: tuple[int | str, int]) -> tuple:
    # Inspect's own order (read_eval_log's): by epoch, then by id, numbers
    # before text and in numeric order.
    sample_id, epoch = key
    return (epoch, sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20))


def _kind(path: Path) -> str:
    """ "eval" or "json" from the file's first bytes, whatever its name."""
    with open(path, "rb") as stream:
        head = stream.read(64)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "eval"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "json"
    if path.suffix == ".eval":
        what = "is empty" if not head else "is not a zip archive"
        raise _file_error(f"this is not an Inspect log: a .eval log is a zip archive, and this file {what}")
    raise _file_error(
        "this is not an Inspect log: an Inspect log is a .eval zip archive or a .json file "
        "holding one JSON object"
    )


def _check_version(version: Any) -> None:
    if type(version) is not int or version not in KNOWN_VERSIONS:
        known = ", ".join(map(str, KNOWN_VERSIONS[:-1])) + f" and {KNOWN_VERSIONS[-1]}"
        shown = orjson.dumps(version, default=str).decode()[:20]
        raise _file_error(
            f"this Inspect log is in format version {shown}, which this "
            f"import does not know (it reads versions {known}): convert the log with the Inspect "
            "version that wrote it, or ask for this version to be supported",
            field="version",
        )


def _open(path: Path) -> _Log:
    """The log at ``path``, its header read and its samples listed; raise
    LogFileError for a file that is not an Inspect log, a format version
    outside KNOWN_VERSIONS, a .json log over JSON_MAX_BYTES and a log without
    samples."""
    path = Path(path)
    kind = _kind(path)
    inspect_log = _inspect()
    log = _open_eval(inspect_log, path) if kind == "eval" else _open_json(inspect_log, path)
    if not log.keys:
        status = log.header.status
        why = f" (its status is {status!r}: no sample ended before the run stopped)"
        raise _file_error(f"the log holds no samples{'' if status == 'success' else why}", field="samples")
    return log


def _open_eval(inspect_log, path: Path) -> _Log:
    try:
        header = inspect_log.read_eval_log(str(path), header_only=True, format="eval")
    except Exception as error:
        raise _file_error(
            "this is not an Inspect log: a .eval log is a zip archive holding header.json "
            f"or _journal/start.json, and Inspect could not read it ({_reason(error)})"
        ) from error
    _check_version(header.version)
    keys = _planned(header)
    if keys is None:
        try:
            summaries = inspect_log.read_eval_log_sample_summaries(str(path), format="eval")
        except Exception as error:
            raise _file_error(f"Inspect could not list the log's samples ({_reason(error)})") from error
        keys = [(summary.id, summary.epoch) for summary in summaries]
        del summaries
    log = _Log(path, "eval", header, sorted(dict.fromkeys(keys), key=_sort_key))
    log.chunked = _check_chunked(inspect_log, log)
    return log


# A sample of Inspect's chunked layout is a folder: samples/<id>_epoch_<n>/
# holding sample.json and its sequences, where the usual layout has one
# samples/<id>_epoch_<n>.json.
_CHUNKED_SHELL = re.compile(r"^samples/[^/]+/sample\.json$")


def _check_chunked(inspect_log, log: _Log) -> bool:
    """Whether the .eval log keeps its samples in Inspect's chunked layout;
    raise LogFileError when it does and the installed Inspect cannot read
    its first sample."""
    with zipfile.ZipFile(log.path) as archive:
        shell = next((name for name in archive.namelist() if _CHUNKED_SHELL.match(name)), None)
    if shell is None:
        return False
    try:
        if log.keys:
            sample_id, epoch = log.keys[0]
            inspect_log.read_eval_log_sample(
                str(log.path), sample_id, epoch, resolve_attachments=True, format="eval"
            )
    except Exception as error:
        raise _file_error(
            f"this log keeps its samples in Inspect's chunked layout ({shell}, written by inspect log "
            f"convert-chunked), which the installed Inspect cannot read ({_reason(error)}): read it with "
            "an Inspect version that reads that layout, or import the log it was converted from",
            field="samples",
        ) from error
    return True


def _planned(header) -> list[tuple[int | str, int]] | None:
    """Every (id, epoch) of a log that ran its whole plan, from its header
    alone, as Inspect's own read_eval_log_samples counts them; None when the
    header cannot tell (a run that did not finish, stopped early or was
    drained, or was edited since), and the samples' summaries must."""
    sample_ids = header.eval.dataset.sample_ids
    results = header.results
    if (
        header.status != "success"
        or header.invalidated
        or sample_ids is None
        or results is None
        or results.logged_samples is not None
        or results.early_stopping is not None
    ):
        return None
    epochs = header.eval.config.epochs or 1
    if results.total_samples != len(sample_ids) * epochs:
        return None
    return [(sample_id, epoch) for epoch in range(1, epochs + 1) for sample_id in sample_ids]


def _open_json(inspect_log, path: Path) -> _Log:
    version, has_eval = _json_head(path)
    if not has_eval:
        raise _file_error(
            'this is not an Inspect log: the JSON object has no "eval" part, which every Inspect log has'
        )
    _check_version(version)
    size = path.stat().st_size
    if size > JSON_MAX_BYTES:
        raise _file_error(
            f"this .json log is {size / 2**20:,.0f} MB: Inspect reads a .json log whole, so one over "
            f"{JSON_MAX_BYTES / 2**20:,.0f} MB is refused; convert it to a .eval log, which is read "
            "sample by sample: inspect log convert LOG.json --to eval --output-dir DIR"
        )
    try:
        log = inspect_log.read_eval_log(str(path), resolve_attachments=True, format="json")
    except Exception as error:
        if version >= 3:
            # Inspect's .json reader refuses any version above the one its
            # recorder writes (2), when its .eval reader reads version 3.
            raise _file_error(
                f"this .json log is in format version {version}, which the installed Inspect reads only "
                f"from a .eval log (Inspect could not read it: {_reason(error)}): convert it with the "
                "Inspect version that wrote it: inspect log convert LOG.json --to eval --output-dir DIR",
                field="version",
            ) from error
        raise _file_error(f"Inspect could not read this .json log ({_reason(error)})") from error
    # Sorted as a .eval log's samples are; a sample given twice stays, for
    # convert to name.
    samples = sorted(log.samples or [], key=lambda sample: _sort_key((sample.id, sample.epoch)))
    log.samples = None
    keys = [(sample.id, sample.epoch) for sample in samples]
    return _Log(path, "json", log, keys, samples=samples)


def _json_head(path: Path) -> tuple[Any, bool]:
    """The raw ``version`` of a JSON log (Inspect's reader reports every
    version it reads as its own) and whether it has an "eval" part, read up
    to the samples only."""
    import ijson

    version, has_eval = _MISSING, False
    with open(path, "rb") as stream:
        try:
            for prefix, event, value in ijson.parse(stream):
                if prefix == "" and event == "start_map":
                    continue
                if prefix == "" and event != "map_key":
                    break  # not an object
                if prefix == "" and event == "map_key":
                    if value == "samples" or (version is not _MISSING and has_eval):
                        break
                    has_eval = has_eval or value == "eval"
                elif prefix == "version" and version is _MISSING:
                    version = value
        except Exception as error:
            if version is _MISSING or not has_eval:
                raise _file_error(f"this is not an Inspect log: not valid JSON ({_reason(error)})") from error
    if version is _MISSING:
        version = None
    elif type(version) is not int and isinstance(version, int | float) and float(version).is_integer():
        version = int(version)
    return version, has_eval


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text[:200]}" if text else type(error).__name__


# -- the interface ----------------------------------------------------------

# Defaults are taken from the metadata of this many first samples, by
# preview and convert alike.
DEFAULTS_FROM = 5


def _row(sample) -> dict:
    row = {
        "id": sample.id,
        "epoch": sample.epoch,
        "input": question_text(sample.input),
        "target": sample.target,
        **({"choices": list(sample.choices)} if sample.choices else {}),
        "completion": sample.output.completion if sample.output is not None else "",
        "metadata": json_safe(sample.metadata or {}),
        "scores": inspect_scores(sample.scores),
    }
    if sample.error is not None:
        row["error"] = sample.error.message
    if sample.limit is not None:
        row["limit"] = {"type": sample.limit.type, "limit": json_safe(sample.limit.limit)}
    return row


def _fields(samples: Iterable) -> list[str]:
    fields: dict[str, None] = {}
    for sample in samples:
        if sample is not None:
            fields.update(dict.fromkeys(metadata_fields(sample.metadata or {})))
    return list(fields)


def _unreadable(number: int, error: Exception) -> LineError:
    return LineError(number, None, f"Inspect could not read this sample ({_reason(error)})", unit="sample")


def preview(path: Path, options: ImportOptions, *, rows: int = 5) -> Preview:
    """What the first ``rows`` samples of the Inspect log at ``path`` become.

    The versions and set name are the log's own suggestions (model, task and
    task version); ``fields`` the metadata keys of the first samples, nested
    ones as dotted paths; ``columns`` the mapping in use, defaults filled
    in; ``samples`` how many samples the log holds. ``errors`` are those of
    the first samples, and what convert refuses in the whole log's list of
    samples (an id and epoch given twice, a gap in epochs). Raises
    LogFileError for a file convert refuses whole (not an Inspect log, an
    unknown format version, no samples, more epochs than a run log holds,
    options it cannot use)."""
    _check_options(options)
    log = _open(Path(path))
    _check_repetitions(log)
    first = list(log.read(max(rows, DEFAULTS_FROM)))
    fields = _fields(sample for sample, _ in first)
    columns = default_columns(_fields(sample for sample, _ in first[:DEFAULTS_FROM]), options.columns)
    assistant_version, set_version, set_name = suggested_versions(log.header.eval)
    shown = Preview(
        format="inspect",
        assistant_version=assistant_version,
        set_version=set_version,
        set_name=set_name,
        fields=fields,
        columns=columns,
        samples=len(log.keys),
        status=log.header.status,
        planned=None if log.planned is None else len(log.planned),
        note=log.note(),
    )
    repetitions = log.repetitions
    for number, (sample, error) in enumerate(first[:rows], start=1):
        if error is not None:
            shown.errors.append(_unreadable(number, error))
            continue
        shown.rows.append(_row(sample))
        line, _, errors = _sample_errors(number, sample, columns, options, repetitions)
        if line is not None:
            shown.lines.append(line)
        shown.errors.extend(errors)
    shown.errors.extend(error for error in _key_errors(log) if error not in shown.errors)
    return shown


def log_note(path: Path) -> str:
    """What preview's ``note`` says of the log at ``path`` (its status and how
    much of its plan it holds, when its run did not finish), read from its
    header alone for a finished log: a .json log is read whole only when
    the note has something to say."""
    return log_plan(path)[0]


def log_plan(path: Path) -> tuple[str, int]:
    """(log_note's note, the number of planned attempts the log does not
    hold, which convert writes as cancelled ones) for the log at ``path``;
    ("", 0) for a finished log, read from its header alone."""
    path = Path(path)
    header = _inspect().read_eval_log(str(path), header_only=True)
    if header.status not in INCOMPLETE:
        return "", 0
    log = _open(path)
    return log.note(), len(log.not_run)


def _check_repetitions(log: _Log) -> None:
    if log.repetitions > MAX_REPETITIONS:
        raise _file_error(
            f"the log has {log.repetitions} epochs; a run log holds at most {MAX_REPETITIONS} repetitions",
            field="epochs",
        )


def _key_errors(log: _Log) -> list[LineError]:
    """What convert refuses in the log's list of samples, told from the list
    alone (a preview reads only the first samples): an id and epoch given
    twice, and a gap in a question's epochs."""
    first_seen: dict[tuple[str, int], int] = {}
    errors = []
    for number, (sample_id, epoch) in enumerate([*log.keys, *log.not_run], start=1):
        key = (str(sample_id), epoch)
        if key in first_seen:
            errors.append(_twice(number, key, first_seen[key]))
        else:
            first_seen[key] = number
    if log.repetitions > 1:
        errors += _gap_errors(first_seen)
    return errors


def header(log_header, options: ImportOptions, repetitions: int) -> dict:
    """The run log's header line: the versions (the options', else the log's
    own) and, from the log's plan, repetitions (left out when 1) and
    timeout_s (the sample time limit, when one was set)."""
    assistant_version, set_version, _ = suggested_versions(log_header.eval)
    line: dict[str, Any] = {
        "assistant_version": options.assistant_version or assistant_version,
        "set_version": options.set_version or set_version,
    }
    if repetitions != 1:
        line["repetitions"] = repetitions
    time_limit = log_header.eval.config.time_limit
    if isinstance(time_limit, int | float) and 1 <= time_limit <= 24 * 60 * 60:
        line["timeout_s"] = math.ceil(time_limit)
    return line


def convert(path: Path, out: BinaryIO, options: ImportOptions, *, max_errors: int = 200) -> int:
    """Write the Inspect log at ``path`` to ``out`` as a combined-form run
    log (UTF-8 JSON Lines: a header, then one line per sample, then one
    cancelled attempt for each sample an incomplete log planned and lacks);
    return the number of answer lines written.

    Reads a .eval log sample by sample. Raises LogFileError listing every
    bad sample (its position in the log's order, by epoch then id; the
    sample field; the reason), up to ``max_errors``, after reading them
    all; ``out`` then holds a partial log for the caller to discard. Refuses
    whole a file that is not an Inspect log, a format version outside
    KNOWN_VERSIONS, a .json log over JSON_MAX_BYTES, a log without samples,
    more epochs than a run log's repetitions allow, and options it cannot
    use. A sample is refused for a mapped metadata key it lacks, evidence it
    cannot read (records whose values are not numbers), an id and epoch
    given twice, a gap in a question's epochs, and any field the run log's
    own checks (scoring.logfile) refuse."""
    _check_options(options)
    log = _open(Path(path))
    _check_repetitions(log)
    repetitions = log.repetitions
    columns = default_columns(_fields(sample for sample, _ in log.read(DEFAULTS_FROM)), options.columns)
    collector = ErrorCollector(max_errors)
    out.write(orjson.dumps(header(log.header, options, repetitions), option=orjson.OPT_APPEND_NEWLINE))
    workers = min(os.cpu_count() or 1, MAX_WORKERS) if _may_fork() else 1
    # A chunked log is read through Inspect's public reader, in one process.
    if log.samples is not None or log.chunked or workers < 2 or len(log.keys) < PARALLEL_FROM:
        written, first_seen, expected = _convert_part(log, 1, columns, options, repetitions, out, collector)
    else:
        written, first_seen, expected = _convert_parallel(
            log, workers, columns, options, repetitions, out, collector
        )
    written += _write_not_run(log, options, repetitions, out, collector, first_seen, expected)
    if repetitions > 1:
        collector.add(_gap_errors(first_seen))
    collector.raise_if_any()
    return written


# A .eval log of this many samples or more is converted by several
# processes, each reading its share of the zip: parsing and validating a
# sample is most of the time, and it is the same work for each.
PARALLEL_FROM = 20_000
MAX_WORKERS = 4


def _may_fork() -> bool:
    """Whether this process may start workers of its own: not a daemonic one
    (a Celery pool's worker refuses children), and only from the main thread
    (forking a process with other threads running can copy a held lock)."""
    return (
        not multiprocessing.current_process().daemon and threading.current_thread() is threading.main_thread()
    )


def _convert_part(
    log: _Log,
    first_number: int,
    columns: Mapping[str, str],
    options: ImportOptions,
    repetitions: int,
    out: BinaryIO,
    collector: ErrorCollector,
) -> tuple[int, dict[tuple[str, int], int], dict[str, list]]:
    """Convert the samples of ``log`` (numbered from ``first_number``) to
    ``out``; (lines written, the sample number of each (question, attempt),
    the expected values of each question as its first sample gives them)."""
    first_seen: dict[tuple[str, int], int] = {}
    expected: dict[str, list] = {}
    written = 0
    for number, (sample, error) in enumerate(log.read(), start=first_number):
        if error is not None:
            collector.add([_unreadable(number, error)])
            continue
        line, data, errors = _sample_errors(number, sample, columns, options, repetitions)
        if not errors:
            key = (line["question_id"], line["attempt"])
            if key in first_seen:
                errors.append(_twice(number, key, first_seen[key]))
            else:
                first_seen[key] = number
        if errors:
            collector.add(errors)
            continue
        expected.setdefault(line["question_id"], line["expected_values"])
        out.write(data)
        written += 1
    return written, first_seen, expected


def _write_not_run(
    log: _Log,
    options: ImportOptions,
    repetitions: int,
    out: BinaryIO,
    collector: ErrorCollector,
    first_seen: dict[tuple[str, int], int],
    expected: Mapping[str, list],
) -> int:
    """Write a cancelled attempt for each (id, epoch) an incomplete log
    planned and does not hold, numbered after its samples, so that every
    measure's N counts the whole plan: with the expected values its question
    has in the epochs the log holds (``expected``), none for a sample it
    holds in no epoch; the number written."""
    written = 0
    for number, (sample_id, epoch) in enumerate(log.not_run, start=len(log.keys) + 1):
        line = not_run_line(sample_id, epoch, options, log.header.status)
        line["expected_values"] = list(expected.get(line["question_id"], ()))
        key = (line["question_id"], epoch)
        where = f"(sample id {sample_id!r}, epoch {epoch}, not run)"
        errors = [
            LineError(number, error.field, f"{error.message} {where}", unit="sample")
            for error in answer_errors(number, line, repetitions=repetitions) + question_errors(number, line)
        ]
        if not errors and key in first_seen:
            errors.append(_twice(number, key, first_seen[key]))
        if errors:
            collector.add(errors)
            continue
        first_seen[key] = number
        out.write(orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE))
        written += 1
    return written


def _twice(number: int, key: tuple[str, int], first: int) -> LineError:
    return LineError(
        number,
        "id",
        f"question {key[0]!r} epoch {key[1]} is already sample {first}: a log gives each sample's epoch once",
        unit="sample",
    )


def _convert_parallel(log, workers, columns, options, repetitions, out, collector):
    """_convert_part over ``workers`` contiguous shares of the samples, in
    forked processes writing temporary files, joined in order; a question
    and epoch met in two shares is named as in one."""
    share = -(-len(log.keys) // workers)
    starts = range(0, len(log.keys), share)
    with tempfile.TemporaryDirectory(prefix="inspect-import-") as folder:
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(max_workers=len(starts), mp_context=context) as pool:
            parts = [
                pool.submit(
                    _convert_share,
                    log.path,
                    log.keys[start : start + share],
                    start + 1,
                    dict(columns),
                    options,
                    repetitions,
                    collector.limit,
                    str(Path(folder) / f"{start}.jsonl"),
                )
                for start in starts
            ]
            results = [part.result() for part in parts]
        written = 0
        first_seen: dict[tuple[str, int], int] = {}
        expected: dict[str, list] = {}
        for (part_written, part_seen, part_expected, errors, total), start in zip(
            results, starts, strict=True
        ):
            collector.add(errors)
            collector.total += total - len(errors)
            for key, number in part_seen.items():
                if key in first_seen:
                    collector.add([_twice(number, key, first_seen[key])])
                else:
                    first_seen[key] = number
            for question_id, values in part_expected.items():
                expected.setdefault(question_id, values)
            written += part_written
            if not collector.total:
                with open(Path(folder) / f"{start}.jsonl", "rb") as part_file:
                    shutil.copyfileobj(part_file, out, 1024 * 1024)
    collector.errors.sort(key=lambda error: error.line)
    return written, first_seen, expected


def _convert_share(path, keys, first_number, columns, options, repetitions, max_errors, target):
    """In a worker process: convert the samples ``keys`` of the .eval log at
    ``path`` to the file ``target``; (written, first seen, errors, total)."""
    collector = ErrorCollector(max_errors)
    share = _Log(Path(path), "eval", None, keys)
    with open(target, "wb") as out:
        written, first_seen, expected = _convert_part(
            share, first_number, columns, options, repetitions, out, collector
        )
    return written, first_seen, expected, collector.errors, collector.total


def _gap_errors(first_seen: Mapping[tuple[str, int], int]) -> list[LineError]:
    """An error for each question an epoch is missing from below one it has
    (an interrupted run can leave one), on the sample after the gap."""
    attempts: dict[str, dict[int, int]] = {}
    for (question_id, attempt), number in first_seen.items():
        attempts.setdefault(question_id, {})[attempt] = number
    errors = []
    for question_id, given in attempts.items():
        if len(given) == max(given):
            continue
        missing = [attempt for attempt in range(1, max(given)) if attempt not in given]
        after = min(attempt for attempt in given if attempt > missing[0])
        errors.append(
            LineError(
                given[after],
                "epoch",
                f"question {question_id!r} has epoch {after} but not epoch "
                f"{', '.join(map(str, missing))}: a run log numbers a question's attempts from 1 "
                "without gaps, so the log must hold every earlier epoch",
                unit="sample",
            )
        )
    return sorted(errors, key=lambda error: error.line)
