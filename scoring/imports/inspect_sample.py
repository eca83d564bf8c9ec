"""One Inspect sample as one line of the combined form (see inspect_log for
what each field becomes), and the labels and metadata columns taken from a
log. Nothing here imports Inspect: a sample is read through its attributes."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from scoring.fieldpath import lookup
from scoring.imports.common import ImportOptions
from scoring.imports.expected import expected_values, written_values
from scoring.logfile import (
    LineError,
    LogFileError,
    answer_errors,
    holds_nul,
    label_problem,
    language_problem,
    question_errors,
    set_name_problem,
)

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


def _check_options(
    options: ImportOptions, fields: tuple[str, ...] = FIELDS, source: str = "an Inspect log's metadata"
) -> None:
    """Refuse (LogFileError) a mapped field that ``source`` cannot fill (one
    not in ``fields``), versions or a set name that are not labels, and a
    language that is not one; lm-eval's reader checks its options so too."""
    problems = []
    for field in options.columns:
        if field not in fields:
            problems.append(
                LineError(
                    0,
                    "columns",
                    f"{field!r} is not a field {source} can fill; those are {', '.join(fields)}",
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


_MISSING = object()


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


def option_letter(index: int) -> str:
    """The letter Inspect's multiple_choice gives the option at ``index``
    (from 0): A to Z, then 1, 2, ... as Inspect numbers the 27th on."""
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def with_options(question: str, choices: list[str]) -> str:
    """A multiple-choice question as spec 001 asks it: the stem, then each
    option on its own line after its letter ("A. Lyon"), the spaces and
    line breaks around the option's text left out."""
    options = [f"{option_letter(index)}. {choice.strip()}" for index, choice in enumerate(choices)]
    return "\n".join([question, *options]) if question else "\n".join(options)


def option_targets(targets: list[str], choices: list[str]) -> list[str]:
    """A multiple-choice target as the options it names ("B" -> "B. Paris"),
    each letter in turn; the target as written when one of its parts is no
    option's letter (a target that gives the answer's text itself)."""
    letters = {option_letter(index): choice for index, choice in enumerate(choices)}
    named = [letters.get(target.strip()) for target in targets]
    if not targets or any(choice is None for choice in named):
        return targets
    return [f"{target.strip()}. {choice.strip()}" for target, choice in zip(targets, named, strict=True)]


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
        value = lookup(metadata, key, default=_MISSING)
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
    choices = list(sample.choices or ())
    if choices:
        targets = option_targets(targets, choices)

    behaviour = mapped("expected_behaviour")
    if behaviour is _MISSING:
        behaviour = "answer"
    elif isinstance(behaviour, str):
        behaviour = behaviour.strip().lower()
    question = question_text(sample.input)
    expected = mapped("expected_values")
    if expected is _MISSING:
        # A multiple-choice target names an option, and a question to decline
        # expects no value: neither whatever numbers the target's text holds.
        expected = []
        if behaviour == "answer" and not choices:
            expected = expected_values(targets, question=question, language=language_code)
    elif isinstance(expected, str):
        expected = written_values([expected], language=language_code)
    elif _is_number(expected):
        expected = [expected]

    line: dict[str, Any] = {
        "question_id": str(question_id) if isinstance(question_id, int | str) else question_id,
        "attempt": sample.epoch,
        "language": language,
    }
    if question.startswith("attachment://"):
        raise _SampleError("input", f"refers to {question[:60]}, which the sample's attachments do not hold")
    if choices:
        question = with_options(question, choices)
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
        values.update(dict.fromkeys(written_values(passages, language=language_code)))
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


def not_run_line(sample_id: int | str, epoch: int, options: ImportOptions, status: str) -> dict:
    """The run-log line of an attempt a run planned and did not make: a
    cancelled attempt of a question expecting an answer (what the question
    expects is in the samples the log does not hold)."""
    return {
        "question_id": str(sample_id),
        "attempt": epoch,
        "language": options.language,
        "expected_behaviour": "answer",
        "expected_values": [],
        "retrieved_ids": [],
        "retrieved_values": [],
        "status": "cancelled",
        "status_reason": f"not run: the run stopped (the log's status is {status!r}) before this "
        f"sample's epoch {epoch} ended",
        "inspect_scores": {},
    }


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
