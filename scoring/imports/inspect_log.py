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
to) are resolved by Inspect's reader.

What each sample becomes (one line of the combined form of spec 000):

- question_id: the sample's id (as text); attempt: its epoch, and the
  header's repetitions the log's epochs;
- question: the input, or the text of its last user message;
- reference: the target (several joined by " | "); expected_values: the
  numbers in the target other than years; expected_behaviour "answer";
- answer: the model's completion;
- submitted_at/received_at: the sample's start and end (stopped_at when it
  failed), latency_ms its total time;
- status "error" for a sample an error halted, "timeout" for one a time or
  working limit halted, "cancelled" for one the operator stopped and
  "error" for any other limit (token, message, cost...), each with its
  status_reason; a failed sample has no answer;
- inspect_scores: Inspect's own scores, kept apart from this app's measures;
- evidence and the other fields from the sample's metadata, under the keys
  ``ImportOptions.columns`` names (run-log field -> metadata key, a dotted
  path for nested metadata; see FIELDS and default_columns).
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import multiprocessing
import os
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
from scoring.logfile import (
    MAX_REPETITIONS,
    ErrorCollector,
    LineError,
    LogFileError,
    answer_errors,
    holds_nul,
    label_problem,
    language_problem,
    question_errors,
    set_name_problem,
)
from scoring.numbers import extract_numbers

INSTALL = "pip install '.[inspect]'"

# The log format versions Inspect writes: 1 (until 0.3.x of mid-2024, one
# "score" per sample) and 2 (a "scores" mapping). A later version may change
# what a field means, so it is refused even when Inspect's reader reads it.
KNOWN_VERSIONS = (1, 2)

# Inspect's .json reader holds the whole log in memory, as parsed objects
# several times its size on disk.
JSON_MAX_BYTES = 256 * 1024 * 1024

# Samples read at a time from a .eval log, and held in memory together.
BATCH_SAMPLES = 200

# The run-log fields a metadata key can fill.
FIELDS = (
    "question_id",
    "language",
    "retrieved_contexts",
    "retrieved_records",
    "retrieved_ids",
    "retrieved_values",
    "cited_ids",
    "declined",
    "expected_values",
    "expected_behaviour",
    "stratum",
)

# Metadata keys taken without being named, when the first samples have
# them: each field under its own name (question_id aside: the sample's id
# is the question's), and passages under "contexts".
_DEFAULT_KEYS = {field: (field,) for field in FIELDS if field != "question_id"}
_DEFAULT_KEYS["retrieved_contexts"] = ("retrieved_contexts", "contexts")

# A status_reason longer than this is cut: it is read in a table.
REASON_MAX_LENGTH = 500

# Limits that are a time limit (spec 004: a timeout); "operator" is a person
# stopping the sample.
_TIME_LIMITS = ("time", "working")

_FILE = "file"


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


# -- labels -----------------------------------------------------------------


def _label(text: str, *, spaces: bool = False) -> str:
    """``text`` made a version label (or, with ``spaces``, a set name): each
    run of other characters becomes "-", leading punctuation goes."""
    allowed = "._+-" + (" " if spaces else "")
    out, dash = [], False
    for character in text:
        if character.isascii() and (character.isalnum() or character in allowed):
            out.append(character)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    label = "".join(out)[:100].lstrip("._+- ").rstrip(" -")
    return label or "inspect"


def suggested_versions(eval_spec) -> tuple[str, str, str]:
    """(assistant version, set version, set name) for a log's EvalSpec: the
    model ("openai/gpt-4o" -> "openai-gpt-4o"), the task's name and version
    ("inspect_evals/gsm8k", 0 -> "gsm8k-0") and the task's name."""
    task = eval_spec.task.rsplit("/", 1)[-1] or eval_spec.task
    return (
        _label(eval_spec.model),
        _label(f"{task}-{eval_spec.task_version}"),
        _label(task, spaces=True),
    )


# -- columns ----------------------------------------------------------------


def metadata_fields(metadata: Mapping) -> list[str]:
    """The keys of a sample's metadata a mapping can name: nested objects'
    keys as dotted paths (retrieval.contexts), objects themselves left out."""
    fields = []
    for key, value in metadata.items():
        if isinstance(value, Mapping) and value:
            fields.extend(f"{key}.{inner}" for inner in metadata_fields(value))
        else:
            fields.append(str(key))
    return fields


def default_columns(fields: Iterable[str], given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The mapping in use: ``given`` (field -> metadata key; an empty key
    turns a default off), and for fields it leaves out, the metadata key of
    the same name, or "contexts" for retrieved_contexts, when ``fields``
    holds it."""
    present = set(fields)
    columns = {}
    for field in FIELDS:
        if given and field in given:
            if given[field]:
                columns[field] = given[field]
            continue
        if field == "retrieved_contexts" and given and given.get("retrieved_records"):
            continue
        key = next((key for key in _DEFAULT_KEYS.get(field, ()) if key in present), None)
        if key is not None:
            columns[field] = key
    return columns


def _check_options(options: ImportOptions) -> None:
    problems = []
    for field in options.columns:
        if field not in FIELDS:
            problems.append(
                LineError(
                    0,
                    "columns",
                    f"{field!r} is not a field an Inspect log's metadata can fill; "
                    f"those are {', '.join(FIELDS)}",
                    unit=_FILE,
                )
            )
    for name, check in (
        ("assistant_version", label_problem),
        ("set_version", label_problem),
        ("set_name", set_name_problem),
    ):
        value = getattr(options, name)
        if value and (problem := check(value)):
            problems.append(LineError(0, name, problem, unit=_FILE))
    if problem := language_problem(options.language or ""):
        problems.append(LineError(0, "language", problem, unit=_FILE))
    if problems:
        raise LogFileError(problems)


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

    @property
    def repetitions(self) -> int:
        configured = self.header.eval.config.epochs
        return max(configured or 1, max((epoch for _, epoch in self.keys), default=1))

    def read(self, count: int | None = None) -> Iterator[tuple[Any, Exception | None]]:
        """(sample, None) for each of the first ``count`` samples (all by
        default) in order, attachments resolved; (None, the error) for a
        sample Inspect could not read."""
        keys = self.keys if count is None else self.keys[:count]
        if self.samples is not None:
            for sample in self.samples[: len(keys)]:
                yield sample, None
            return
        with _sample_reader(self.path) as read_batch:
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


# Sample fields the conversion never reads (Inspect's own exclude_fields
# names them the same way).
UNUSED_SAMPLE_FIELDS = ("messages", "events", "events_data", "store", "timelines")


@contextmanager
def _sample_reader(path: Path) -> Iterator[Callable[[list], list]]:
    """A function reading a batch of a .eval log's samples by (id, epoch),
    each validated as Inspect's EvalSample with its attachments resolved.

    Inspect's public readers open the zip again for every call, or go
    through an async stack that costs four times the sample's own parsing;
    so, when this Inspect has them, the samples are read from one open zip
    (Inspect's import has taught zipfile its zstd members) with Inspect's
    own member names, model, deserialising context and read-time
    resolution. Otherwise, Inspect's public read_eval_log_samples_by_id."""
    inspect_log = _inspect()
    location = str(path)
    try:
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
        known = " and ".join(map(str, KNOWN_VERSIONS))
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
    return _Log(path, "eval", header, sorted(dict.fromkeys(keys), key=_sort_key))


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
        raise _file_error(f"Inspect could not read this .json log ({_reason(error)})") from error
    # Sorted as a .eval log's samples are; a sample given twice stays, for
    # convert to name.
    samples = sorted(log.samples or [], key=lambda sample: _sort_key((sample.id, sample.epoch)))
    log.samples = None
    keys = [(sample.id, sample.epoch) for sample in samples]
    return _Log(path, "json", log, keys, samples=samples)


_MISSING = object()


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


# -- one sample -------------------------------------------------------------


class _SampleError(Exception):
    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        text = getattr(part, "text", None)
        if getattr(part, "type", None) == "text" and isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def question_text(sample_input: Any) -> str:
    """The question a sample's input asks: the input itself, or the text of
    its last user message (its text parts, joined by line breaks)."""
    if isinstance(sample_input, str):
        return sample_input
    users = [message for message in sample_input or () if getattr(message, "role", None) == "user"]
    return _text(users[-1].content) if users else ""


def _numbers(texts: Iterable[str], language: str) -> list[float]:
    """The numbers written in ``texts``, years left out, each once, in order."""
    seen: dict[float, None] = {}
    for text in texts:
        for number in extract_numbers(text, language=language):
            if not number.is_year:
                seen.setdefault(number.value, None)
    return list(seen)


def _lookup(metadata: Mapping, key: str) -> Any:
    """``metadata[key]``, or the value at the dotted path ``key``; _MISSING
    when neither is there."""
    if key in metadata:
        return metadata[key]
    value: Any = metadata
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data: non-finite numbers become null, models
    and other objects their JSON form or their text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if hasattr(value, "model_dump"):
        return json_safe(value.model_dump(mode="json"))
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _records(source: str, items: list) -> list[dict]:
    """Retrieved records ({id, values, label?, period?, unit?, caveats?})
    from metadata objects with "id" and "values"; refuses an id that is not
    text or a number and values that are not numbers."""
    records = []
    for index, item in enumerate(items):
        where = f"{source}[{index}]"
        if not isinstance(item, Mapping):
            raise _SampleError(where, "must be an object with an id and its values")
        record_id = item.get("id")
        if isinstance(record_id, int) and not isinstance(record_id, bool):
            record_id = str(record_id)
        if not isinstance(record_id, str) or not record_id.strip():
            raise _SampleError(f"{where}.id", "missing or not a text id")
        values = item.get("values", [])
        if _is_number(values):
            values = [values]
        if not isinstance(values, list):
            raise _SampleError(f"{where}.values", "must be a list of numbers")
        for position, value in enumerate(values):
            if not _is_number(value) or not math.isfinite(value):
                raise _SampleError(
                    f"{where}.values[{position}]",
                    f"is {orjson.dumps(json_safe(value)).decode()[:40]}, not a number: "
                    "a record's values are numbers",
                )
        record = {"id": record_id, "values": list(values)}
        for name in ("label", "period", "unit"):
            if item.get(name) is not None:
                if not isinstance(item[name], str):
                    raise _SampleError(f"{where}.{name}", "must be text")
                record[name] = item[name]
        caveats = item.get("caveats")
        if caveats is not None:
            if isinstance(caveats, str):
                caveats = [caveats]
            if not isinstance(caveats, list) or not all(isinstance(caveat, str) for caveat in caveats):
                raise _SampleError(f"{where}.caveats", "must be a list of texts")
            record["caveats"] = caveats
        records.append(record)
    return records


def _evidence(source: str, value: Any, *, records_only: bool) -> tuple[list[str], list[dict], list[str]]:
    """(passages, records, ids) from the metadata value at ``source``: a list
    of texts, of objects with "text" or "content" (and maybe "id"), or of
    records with "id" and "values"."""
    if isinstance(value, str) and not records_only:
        return [value], [], []
    if not isinstance(value, list):
        wanted = "a list of records" if records_only else "a list of passages or records"
        raise _SampleError(source, f"must be {wanted}, not {type(value).__name__}")
    if not value:
        return [], [], []
    if all(isinstance(item, Mapping) and "values" in item for item in value):
        return [], _records(source, value), []
    if records_only:
        raise _SampleError(source, 'must be a list of records, objects with "id" and "values"')
    passages, ids = [], []
    for index, item in enumerate(value):
        if isinstance(item, str):
            passages.append(item)
            continue
        text = item.get("text", item.get("content")) if isinstance(item, Mapping) else None
        if not isinstance(text, str):
            raise _SampleError(
                f"{source}[{index}]",
                'must be a passage: text, or an object with "text" or "content" '
                '(or a record with "id" and "values")',
            )
        passages.append(text)
        if isinstance(item.get("id"), str):
            ids.append(item["id"])
    return passages, [], ids


def _status(sample) -> tuple[str, str, str] | None:
    """(status, reason, source field) of a sample that did not end with an
    answer, None for one that did."""
    if sample.error is not None:
        message = (sample.error.message or "").strip() or "an error with no message"
        status = "cancelled" if message.startswith(("CancelledError(", "Cancelled(")) else "error"
        return status, message, "error"
    limit = sample.limit
    if limit is None:
        return None
    value = str(int(limit.limit)) if float(limit.limit).is_integer() else f"{limit.limit}"
    if limit.type in _TIME_LIMITS:
        reason = f"{limit.type} limit of {value} seconds reached"
        status = "timeout"
    elif limit.type == "operator":
        reason = "stopped by the operator"
        status = "cancelled"
    elif limit.type == "custom":
        reason = "custom limit reached"
        status = "error"
    else:
        reason = f"{limit.type} limit of {value} reached"
        status = "error"
    if limit.reason:
        reason = f"{reason}: {limit.reason}"
    return status, reason, "limit"


def _cut(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def inspect_scores(scores: Mapping | None) -> dict:
    """Inspect's scores of a sample as plain data: scorer -> {value, answer, explanation}."""
    return {
        str(name): {
            "value": json_safe(score.value),
            "answer": json_safe(score.answer),
            "explanation": json_safe(score.explanation),
        }
        for name, score in (scores or {}).items()
    }


# Fields only an answer has: a failed sample may lack their metadata keys.
_ANSWER_OWN = frozenset(
    {"retrieved_contexts", "retrieved_records", "retrieved_ids", "retrieved_values", "cited_ids", "declined"}
)

_LOG_SOURCES = {
    "question_id": "id",
    "attempt": "epoch",
    "question": "input",
    "reference": "target",
    "expected_values": "target",
    "answer": "output.completion",
    "submitted_at": "started_at",
    "received_at": "completed_at",
    "stopped_at": "completed_at",
    "latency_ms": "total_time",
}


def convert_sample(sample, columns: Mapping[str, str], options: ImportOptions) -> tuple[dict, dict[str, str]]:
    """The run-log line of one EvalSample, and where each of its fields came
    from (run-log field -> sample field). Raises _SampleError for metadata
    that cannot be read as the mapping says, and for a mapped key a sample
    lacks; a sample that failed may lack those of the answer's own fields
    (evidence, citations, declined): it has no answer."""
    metadata = sample.metadata or {}
    sources = dict(_LOG_SOURCES)
    failure = _status(sample)

    def mapped(field: str) -> Any:
        key = columns.get(field)
        if not key:
            return _MISSING
        source = f"metadata.{key}"
        value = _lookup(metadata, key)
        if value is _MISSING:
            # A key taken by default (seen in the first samples) may be
            # absent from others; only a key the person named is required.
            if (failure is not None and field in _ANSWER_OWN) or not options.columns.get(field):
                return _MISSING
            raise _SampleError(source, f"missing: the sample has no metadata key {key!r} (mapped to {field})")
        sources[field] = source
        return value

    question_id = mapped("question_id")
    if question_id is _MISSING:
        question_id = sample.id
    language = mapped("language")
    if language is _MISSING:
        language = options.language
        sources.pop("language", None)
    target = sample.target
    targets = [target] if isinstance(target, str) else list(target)
    language_code = language if isinstance(language, str) else ""

    expected = mapped("expected_values")
    if expected is _MISSING:
        expected = _numbers(targets, language_code)
    elif isinstance(expected, str):
        expected = _numbers([expected], language_code)
    elif _is_number(expected):
        expected = [expected]
    behaviour = mapped("expected_behaviour")
    if behaviour is _MISSING:
        behaviour = "answer"
    elif isinstance(behaviour, str):
        behaviour = behaviour.strip().lower()

    line: dict[str, Any] = {
        "question_id": str(question_id) if isinstance(question_id, int | str) else question_id,
        "attempt": sample.epoch,
        "language": language,
    }
    question = question_text(sample.input)
    if question.startswith("attachment://"):
        raise _SampleError("input", f"refers to {question[:60]}, which the sample's attachments do not hold")
    if question:
        line["question"] = question
    reference = " | ".join(targets)
    if reference:
        line["reference"] = reference
    line["expected_behaviour"] = behaviour
    line["expected_values"] = expected
    stratum = mapped("stratum")
    if stratum is not _MISSING and stratum is not None:
        line["stratum"] = stratum

    passages: list[str] = []
    records: list[dict] = []
    ids: list[str] = []
    for field, records_only in (("retrieved_contexts", False), ("retrieved_records", True)):
        value = mapped(field)
        if value is _MISSING:
            continue
        found_passages, found_records, found_ids = _evidence(sources[field], value, records_only=records_only)
        passages += found_passages
        records += found_records
        ids += found_ids
        for derived in ("retrieved_ids", "retrieved_values", "retrieved_records", "retrieved_contexts"):
            sources.setdefault(derived, sources[field])
    retrieved_ids = mapped("retrieved_ids")
    if isinstance(retrieved_ids, str):
        retrieved_ids = [retrieved_ids]
    elif retrieved_ids is _MISSING:
        retrieved_ids = list(dict.fromkeys([*(record["id"] for record in records), *ids]))
    retrieved_values = mapped("retrieved_values")
    if retrieved_values is _MISSING:
        values = dict.fromkeys(value for record in records for value in record["values"])
        values.update(dict.fromkeys(_numbers(passages, language_code)))
        retrieved_values = list(values)
    # JSON has no NaN or infinity (they would be written as null): a mapped
    # value that is one is named, as a record's is.
    for field, values in (("expected_values", expected), ("retrieved_values", retrieved_values)):
        for index, value in enumerate(values if isinstance(values, list) else ()):
            if _is_number(value) and not math.isfinite(value):
                raise _SampleError(
                    f"{sources.get(field, field)}[{index}]", f"is {value}: a value must be a finite number"
                )
    line["retrieved_ids"] = retrieved_ids
    line["retrieved_values"] = retrieved_values
    if passages:
        line["retrieved_contexts"] = passages
    if records:
        line["retrieved_records"] = records

    if failure is None:
        line["answer"] = sample.output.completion if sample.output is not None else ""
        cited = mapped("cited_ids")
        line["cited_ids"] = [] if cited is _MISSING else [cited] if isinstance(cited, str) else cited
        declined = mapped("declined")
        line["declined"] = False if declined is _MISSING else declined
    else:
        status, reason, source = failure
        line["status"] = status
        line["status_reason"] = _cut(reason, REASON_MAX_LENGTH)
        sources["status"] = sources["status_reason"] = source
    if sample.started_at:
        line["submitted_at"] = sample.started_at
    if sample.completed_at:
        line["received_at" if failure is None else "stopped_at"] = sample.completed_at
    if sample.total_time is not None:
        line["latency_ms"] = round(sample.total_time * 1000, 3)
    line["inspect_scores"] = inspect_scores(sample.scores)
    return line, sources


def _where(field: str | None, sources: Mapping[str, str]) -> tuple[str | None, str]:
    """The sample field behind a run-log field named in an error (its
    position inside kept: retrieved_records[2].values), and the run-log
    field, to name in the message when they differ."""
    if field is None:
        return None, ""
    cut = min((i for i in (field.find("["), field.find(".")) if i >= 0), default=len(field))
    name, rest = field[:cut], field[cut:]
    source = sources.get(name)
    if source is None:
        return field, ""
    if rest and source.startswith("metadata."):
        return source + rest, field
    return source, field


def _sample_errors(
    number: int, sample, columns: Mapping[str, str], options: ImportOptions, repetitions: int
) -> tuple[dict | None, bytes, list[LineError]]:
    """(line, its JSON line, []) for a sample that converts to a valid line,
    else (the line or None, b"", its errors), each naming the sample by its
    position ``number``."""
    where = f"(sample id {sample.id!r}, epoch {sample.epoch})"
    try:
        line, sources = convert_sample(sample, columns, options)
    except _SampleError as error:
        return None, b"", [LineError(number, error.field, f"{error.message} {where}", unit="sample")]
    found = answer_errors(number, line, repetitions=repetitions)
    found += [error for error in question_errors(number, line) if error not in found]
    errors = []
    seen = set()
    for error in found:
        field, log_field = _where(error.field, sources)
        message = error.message
        if log_field and field != log_field and not message.startswith(log_field):
            message = f"as {log_field}, {message}"
        key = (field, message)
        if key not in seen:
            seen.add(key)
            errors.append(LineError(number, field, f"{message} {where}", unit="sample"))
    if errors:
        return line, b"", errors
    data = orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
    # orjson writes NUL as \u0000: a plain search first, the walk only for
    # the rare line that holds one.
    if b"\\u0000" in data and holds_nul(line):
        name = next(name for name, value in line.items() if holds_nul(value))
        message = f"holds the NUL character (\\u0000), which cannot be stored: remove it {where}"
        return line, b"", [LineError(number, sources.get(name, name), message, unit="sample")]
    return line, data, []


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
    in; ``samples`` how many samples the log holds. Raises LogFileError for
    a file convert refuses whole (not an Inspect log, an unknown format
    version, no samples, options it cannot use)."""
    _check_options(options)
    log = _open(Path(path))
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
    return shown


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
    log (UTF-8 JSON Lines: a header, then one line per sample); return the
    number of sample lines written.

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
    repetitions = log.repetitions
    if repetitions > MAX_REPETITIONS:
        raise _file_error(
            f"the log has {repetitions} epochs; a run log holds at most {MAX_REPETITIONS} repetitions",
            field="epochs",
        )
    columns = default_columns(_fields(sample for sample, _ in log.read(DEFAULTS_FROM)), options.columns)
    collector = ErrorCollector(max_errors)
    out.write(orjson.dumps(header(log.header, options, repetitions), option=orjson.OPT_APPEND_NEWLINE))
    workers = min(os.cpu_count() or 1, MAX_WORKERS) if _may_fork() else 1
    if log.samples is not None or workers < 2 or len(log.keys) < PARALLEL_FROM:
        written, first_seen = _convert_part(log, 1, columns, options, repetitions, out, collector)
    else:
        written, first_seen = _convert_parallel(log, workers, columns, options, repetitions, out, collector)
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
) -> tuple[int, dict[tuple[str, int], int]]:
    """Convert the samples of ``log`` (numbered from ``first_number``) to
    ``out``; (lines written, the sample number of each (question, attempt))."""
    first_seen: dict[tuple[str, int], int] = {}
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
        out.write(data)
        written += 1
    return written, first_seen


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
        for (part_written, part_seen, errors, total), start in zip(results, starts, strict=True):
            collector.add(errors)
            collector.total += total - len(errors)
            for key, number in part_seen.items():
                if key in first_seen:
                    collector.add([_twice(number, key, first_seen[key])])
                else:
                    first_seen[key] = number
            written += part_written
            if not collector.total:
                with open(Path(folder) / f"{start}.jsonl", "rb") as part_file:
                    shutil.copyfileobj(part_file, out, 1024 * 1024)
    collector.errors.sort(key=lambda error: error.line)
    return written, first_seen


def _convert_share(path, keys, first_number, columns, options, repetitions, max_errors, target):
    """In a worker process: convert the samples ``keys`` of the .eval log at
    ``path`` to the file ``target``; (written, first seen, errors, total)."""
    collector = ErrorCollector(max_errors)
    share = _Log(Path(path), "eval", None, keys)
    with open(target, "wb") as out:
        written, first_seen = _convert_part(
            share, first_number, columns, options, repetitions, out, collector
        )
    return written, first_seen, collector.errors, collector.total


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
