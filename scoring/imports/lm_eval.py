"""lm-evaluation-harness ``--log_samples`` output as this app's run log.

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task beside its
``results_<date>.json``. Each line is one document (question) under one
filter, as its EvaluationTracker.save_results_samples writes it: doc_id,
doc (the dataset row), target (as text), arguments (the requests:
``{"gen_args_0": {"arg_0": prompt, "arg_1": ...}}``; a list of lists before
lm-eval 0.4.3), resps (per request, the model's outputs, every value as
text), filtered_resps (per request, the output after the task's filter),
filter (its name), metrics (the names of the per-sample metrics, 0.4.3 on)
and each metric's value under its name. lm-eval 0.4.0 to 0.4.2 wrote the
same samples, unsanitised and without filter or metrics, as one indented
JSON array; it is read too, a sample at a time.

What each sample becomes (one line of spec 000's combined form):

- question_id: doc_id; question: the doc's question field (the first of
  QUESTION_KEYS it has), else the first request's prompt;
- multiple choice (every request a continuation whose loglikelihood lm-eval
  compared): the question lists the options lettered A, B, C, ...; the
  answer is the option with the highest loglikelihood, as lm-eval's ``acc``
  reads it (``acc_norm`` divides by length and may pick another); the
  reference is the option the target names ("B. Paris"). The options are
  the continuations; the doc's, read as the QA datasets read options, when
  the continuations are bare letters (MMLU's choices, CMMLU's doc.A ..
  doc.D); and when each option is another context before one continuation
  (winogrande), the doc's option1, option2, ... (else the contexts'
  differing ends), the gold named by the target's index or the doc's
  answer;
- generation: the answer is filtered_resps[0] (or resps[0][0] when mapped
  to "resps"), the whole generation when the filter found nothing (its
  ``[invalid]``, kept as lm_eval.filtered); when resps holds several
  generations (the task's ``repeats``), each is an attempt, and lm-eval's
  filtered answer over them is kept with its metrics;
- reference: the target, a list's aliases (triviaqa) joined by " | " as
  Inspect joins a target's parts; expected_values: the number of the
  target (of its first alias that is one) when it is a number (GSM8K's
  "#### 18" too), else none, and none for multiple choice, whose option is
  right by its letter;
- lm_eval_scores: lm-eval's own per-sample metrics, {metric: {value, answer
  (the filtered answer it scored), explanation (the filter)}}, kept apart
  from this app's measures. A file with several filters logs each document
  once per filter: the first filter gives the answer, and every filter's
  metrics are kept, named "metric,filter" as lm-eval's results name them.

``ImportOptions.columns`` maps a run-log field to a path in the sample
(``doc.question``, ``resps[0][0]``, ``arguments.gen_args_0.arg_0``;
``arguments[0][0]`` also reaches the first prompt in either layout).

The versions are the options', else the file's own: the model from the
results file beside it, the task from the file's name (and its version
from the results file).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from scoring import fieldpath
from scoring.fieldpath import MISSING
from scoring.imports.common import ImportOptions, Preview
from scoring.imports.expected import expected_values
from scoring.imports.inspect_sample import _check_options as _check_labels
from scoring.imports.inspect_sample import _label, json_safe, metadata_fields
from scoring.logfile import (
    MAX_REPETITIONS,
    ErrorCollector,
    LineError,
    LogFileError,
    answer_errors,
    holds_nul,
    iter_lines,
    parse_object,
    question_errors,
)
from scoring.qa.datasets import detected_options
from scoring.qa.datasets import read_options as dataset_options
from scoring.qa.prompts import OPTION_LETTERS

FORMAT = "lm-eval"

# The run-log fields a path in a sample can fill.
FIELDS = (
    "question_id",
    "question",
    "language",
    "answer",
    "reference",
    "expected_values",
    "expected_behaviour",
    "stratum",
)

# What a field is when no path gives it, as the import page says.
DERIVED = {
    "question_id": "doc_id",
    "question": "the first prompt",
    "language": "the language option",
    "answer": "none (required)",
    "reference": "none",
    "expected_values": "the target's number, when the target is a number (none for multiple choice)",
    "expected_behaviour": '"answer"',
    "stratum": "none",
}

# The doc fields that hold the question in lm-eval's common tasks (gsm8k,
# arc, mmlu, c-eval: question; cmmlu: Question; MATH: problem; hellaswag: ctx; piqa: goal;
# winogrande: sentence; ...), looked for in this order.
QUESTION_KEYS = (
    "question",
    "Question",
    "query",
    "problem",
    "input",
    "prompt",
    "goal",
    "ctx",
    "sentence",
    "premise",
    "text",
)

# The keys the writer gives every sample; the others are its metrics (lm-eval
# before 0.4.3 lists them nowhere else).
SAMPLE_KEYS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "task_name",
    }
)

# lm-eval names its output samples_<task>_<date_id>.jsonl, date_id as
# datetime.now().isoformat() with ":" replaced by "-".
SAMPLES_NAME = re.compile(
    r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$"
)

# What lm-eval's extracting filters (regex, take_first) answer when they
# found nothing to extract.
INVALID = "[invalid]"

# lm-eval's results file, results_<date_id>.json, beside the samples.
RESULTS_NAME = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.json$")

# GSM8K's answer line, as lm-eval's own gsm8k filter reads it.
_FINAL_ANSWER = re.compile(r"####\s*(\S[^\n]*)\s*$")

SOURCE_LINE_MAX_BYTES = 64 * 1024 * 1024
SPOOL_BYTES = 8 * 1024 * 1024
DEFAULTS_FROM = 5


def _file_error(message: str, field: str | None = None) -> LogFileError:
    return LogFileError([LineError(0, field, message, unit="file")])


def _raise_if_any(collector: ErrorCollector, path: Path) -> None:
    if collector.total:
        raise LogFileError(_in_units(collector.errors, path), total=collector.total)


# -- paths in a sample -------------------------------------------------------


def find(sample: Any, path: str) -> tuple[Any, str | None]:
    """(value, None) at ``path`` in ``sample`` as scoring.fieldpath reads
    every reader's paths ("doc.question", "resps[0][-1]",
    "arguments.gen_args_0.arg_0"), or (MISSING, why). A list index into the
    writer's gen_args_N/arg_N mappings reaches the same value as in the
    lists lm-eval wrote before 0.4.3 ("arguments[0][0]")."""
    value, why = fieldpath.find(sample, path)
    arguments = sample.get("arguments") if isinstance(sample, Mapping) else None
    if value is MISSING and fieldpath.root(path) == "arguments" and isinstance(arguments, Mapping):
        listed, _ = fieldpath.find({"arguments": _requests(sample)}, path)
        if listed is not MISSING:
            return listed, None
    return value, why


def lookup(sample: Any, path: str) -> Any:
    """The value at ``path`` in ``sample`` (see ``find``), MISSING when the path leads nowhere."""
    return find(sample, path)[0]


def sample_fields(sample: Mapping) -> list[str]:
    """The paths a mapping can name in ``sample``: its keys, the doc's keys
    as doc.<key> (nested ones dotted), and the first prompt."""
    fields = []
    for key, value in sample.items():
        if key == "doc" and isinstance(value, Mapping):
            fields.extend(f"doc.{inner}" for inner in metadata_fields(value))
        elif key == "arguments":
            if lookup(sample, "arguments[0][0]") is not MISSING:
                fields.append(
                    "arguments.gen_args_0.arg_0" if isinstance(value, Mapping) else "arguments[0][0]"
                )
        else:
            fields.append(str(key))
    return fields


# -- what a sample holds -----------------------------------------------------


def _requests(sample: Mapping) -> list[list]:
    """The arguments of each request, in order, in either layout."""
    arguments = sample.get("arguments")
    if isinstance(arguments, list):
        return [list(item) if isinstance(item, list | tuple) else [item] for item in arguments]
    if isinstance(arguments, Mapping):
        requests = []
        for index in range(len(arguments)):
            request = arguments.get(f"gen_args_{index}")
            if not isinstance(request, Mapping):
                break
            requests.append([request[f"arg_{j}"] for j in range(len(request)) if f"arg_{j}" in request])
        return requests
    return []


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _loglikelihood(response: Any) -> float | None:
    """The loglikelihood of a loglikelihood request's response, (ll,
    is_greedy) written as two texts (or, unsanitised, as a number and a
    boolean)."""
    if isinstance(response, list) and len(response) == 2:
        return _float(response[0])
    return None


def kind(sample: Mapping) -> str:
    """ "multiple_choice", "generate", "loglikelihood" (one continuation
    scored), "rolling" (a text's perplexity) or "unknown"."""
    requests = _requests(sample)
    responses = sample.get("filtered_resps")
    if requests and len(requests[0]) >= 2 and isinstance(requests[0][1], Mapping):
        return "generate"
    continuations = bool(requests) and all(len(r) >= 2 and isinstance(r[1], str) for r in requests)
    scored = isinstance(responses, list) and bool(responses)
    if continuations and scored and all(_loglikelihood(r) is not None for r in responses):
        return "multiple_choice" if len(requests) >= 2 else "loglikelihood"
    if requests and all(len(request) == 1 for request in requests):
        return "rolling"
    if not requests and isinstance(responses, list) and responses and isinstance(responses[0], str):
        return "generate"
    return "unknown"


def metric_names(sample: Mapping) -> list[str]:
    """The sample's per-sample metrics: those it lists (lm-eval 0.4.3 on),
    else every key the writer does not give every sample."""
    listed = sample.get("metrics")
    if isinstance(listed, list) and all(isinstance(name, str) for name in listed):
        return [name for name in listed if name in sample]
    return [key for key in sample if key not in SAMPLE_KEYS]


# -- the file ----------------------------------------------------------------


@dataclass
class _Suggested:
    task: str = ""
    model: str = ""
    task_version: str = ""
    planned: int | None = None


def suggested(path: Path, name: str = "") -> _Suggested:
    """The task from the file's name (samples_<task>_<date>.jsonl), and from
    the results file beside it (results_<date>.json), when there is one,
    the model, the task's version and how many samples were evaluated."""
    match = SAMPLES_NAME.match(Path(name or path.name).name)
    if not match:
        return _Suggested()
    found = _Suggested(task=match["task"])
    results_path = Path(path).parent / f"results_{match['date']}.json"
    # An upload stored under another name has nothing beside it.
    beside = not name or Path(name).name == Path(path).name
    results = _read_results(results_path) if beside else None
    if not isinstance(results, dict):
        return found
    model = results.get("model_name")
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    if not isinstance(model, str) or not model:
        model_args = config.get("model_args")
        if isinstance(model_args, str):
            pairs = dict(part.partition("=")[::2] for part in model_args.split(",") if "=" in part)
            model = pairs.get("pretrained") or pairs.get("model") or ""
        elif isinstance(model_args, dict):
            model = model_args.get("pretrained") or model_args.get("model") or ""
        model = model or (config.get("model") if isinstance(config.get("model"), str) else "")
    found.model = model if isinstance(model, str) else ""
    versions = results.get("versions")
    if isinstance(versions, dict) and versions.get(found.task) is not None:
        found.task_version = str(versions[found.task])
    counts = results.get("n-samples")
    if isinstance(counts, dict) and isinstance(counts.get(found.task), dict):
        effective = counts[found.task].get("effective")
        found.planned = effective if isinstance(effective, int) else None
    return found


def _read_results(path: Path) -> Any:
    try:
        if path.stat().st_size > 64 * 1024 * 1024:
            return None
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def suggested_versions(found: _Suggested) -> tuple[str, str, str]:
    """(assistant version, set version, set name) for what the file says."""
    model = _label(found.model) if found.model else ""
    task = found.task
    set_version = _label(f"{task}-{found.task_version}" if found.task_version else task) if task else ""
    return model, set_version, (_label(task, spaces=True) if task else "")


def _is_array(path: Path) -> bool:
    """Whether the file is one JSON array (lm-eval 0.4.0 to 0.4.2 wrote its
    samples so, indented, under a .jsonl name) rather than JSON Lines."""
    with open(path, "rb") as stream:
        head = stream.read(64)
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def _samples(path: Path, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    """(number, sample) for each sample: its line in JSON Lines, its
    position in a JSON array (read one sample at a time)."""
    if _is_array(path):
        yield from _array_samples(path, collector)
        return
    with open(path, "rb") as stream:
        for number, text, _, oversize in iter_lines(stream, max_line_bytes=SOURCE_LINE_MAX_BYTES):
            if oversize:
                collector.add(
                    [LineError(number, None, f"the line is longer than {SOURCE_LINE_MAX_BYTES // 2**20} MB")]
                )
                continue
            record, error = parse_object(number, text)
            if error and text and _NON_FINITE.search(text):
                record, error = _with_non_finite(number, text)
            if error:
                collector.add([error])
            else:
                yield number, record


# lm-eval dumps with Python's json, which writes a metric that is not a
# number (a NaN F1, an infinite perplexity) as NaN or Infinity, outside JSON.
_NON_FINITE = re.compile(r"[:\[,]\s*-?(?:NaN|Infinity)\s*[,\]}]")


def _with_non_finite(number: int, text: str) -> tuple[dict | None, LineError | None]:
    """The line read as lm-eval's own json reads it back, NaN and Infinity
    becoming null (JSON has neither)."""
    try:
        record = json.loads(text)
    except ValueError as error:
        return None, LineError(number, None, f"not JSON ({error})")
    if not isinstance(record, dict):
        return None, LineError(number, None, f"not a JSON object but {type(record).__name__}")
    return json_safe(record), None


def _array_samples(path: Path, collector: ErrorCollector) -> Iterator[tuple[int, dict]]:
    import ijson

    number = 0
    with open(path, "rb") as stream:
        try:
            for number, record in enumerate(ijson.items(stream, "item", use_float=True), start=1):
                if isinstance(record, dict):
                    yield number, record
                else:
                    collector.add([LineError(number, None, "not a JSON object", unit="sample")])
        except ijson.JSONError as error:
            collector.add([LineError(number + 1, None, f"not valid JSON ({error})", unit="sample")])


def _in_units(errors: list[LineError], path: Path) -> list[LineError]:
    """The errors of a JSON-array file named by sample, not by line."""
    if not _is_array(path):
        return errors
    return [
        error if error.unit != "line" else LineError(error.line, error.field, error.message, unit="sample")
        for error in errors
    ]


def _results_file(path: Path) -> str | None:
    """What to import instead when ``path`` is lm-eval's results file (its
    results with the config, versions or n-samples beside them), naming the
    samples files of the same run beside it; None for any other file."""
    results = _read_results(path)
    if not isinstance(results, dict) or "results" not in results:
        return None
    if not {"config", "versions", "n-samples"} & set(results):
        return None
    match = RESULTS_NAME.match(path.name)
    beside = sorted(path.parent.glob(f"samples_*_{match['date']}.jsonl")) if match else []
    named = f" (here {', '.join(sample.name for sample in beside)})" if beside else ""
    return (
        "this is lm-eval's results file (each task's scores), not its samples: import the "
        f"samples_<task>_<date>.jsonl beside it that --log_samples wrote{named}"
    )


def _check_file(path: Path) -> None:
    """Refuse (LogFileError) a file that is not lm-eval samples, or whose
    samples hold no answer, from its first sample."""
    collector = ErrorCollector(1)
    first = next(_samples(path, collector), None)
    if first is None:
        if collector.errors and (problem := _results_file(path)):
            raise _file_error(problem)
        if collector.errors:
            raise _file_error(f"this is not lm-eval samples: {collector.errors[0].message}")
        raise _file_error("the file holds no samples")
    _, sample = first
    if "doc_id" not in sample and (problem := _results_file(path)):
        raise _file_error(problem)
    if "doc_id" not in sample or not ({"resps", "filtered_resps"} & set(sample)):
        keys = ", ".join(list(sample)[:8])
        raise _file_error(
            f"this is not lm-eval --log_samples output: its first object has {keys}, not doc_id and "
            "resps/filtered_resps as lm-eval writes each sample"
        )
    found = kind(sample)
    if found == "loglikelihood":
        raise _file_error(
            "these are samples of a loglikelihood task with one continuation each (such as lambada): "
            "lm-eval scored how likely the target is, so they hold no answer to import"
        )
    if found == "rolling":
        raise _file_error(
            "these are samples of a perplexity task (loglikelihood_rolling, such as wikitext): "
            "lm-eval scored the text's likelihood, so they hold no answer to import"
        )


# -- one sample --------------------------------------------------------------


class _SampleError(Exception):
    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message


def _options(sample: Mapping, requests: list[list]) -> tuple[list[str], list[str] | None]:
    """(the options of a multiple-choice sample, the doc's own labels for
    them or None): each continuation, or, when the continuations are bare
    labels (" A", " B" in MMLU, CMMLU, C-Eval), the doc's options as the QA
    datasets read them: its choices (a list, {text, label} or a mapping) or
    its keys A, B, C, ..."""
    continuations = [str(request[1]).strip() for request in requests]
    doc = sample.get("doc") if isinstance(sample.get("doc"), Mapping) else {}
    names = ("choices",) if "choices" in doc else detected_options(doc)
    if names and all(len(text) <= 2 for text in continuations):
        found, labels = dataset_options(0, names, [doc[name] for name in names], [])
        if found and len(found) == len(continuations):
            return [option.strip() for option in found], (list(labels) if labels else None)
    return continuations, None


def _several_contexts(requests: list[list]) -> bool:
    """Whether each option of a multiple-choice sample is another context
    before one continuation (winogrande's partial evaluation), not one
    context before each option's continuation."""
    contexts = {str(request[0]) for request in requests}
    return len(contexts) > 1 and len({str(request[1]) for request in requests}) == 1


def _context_options(sample: Mapping, requests: list[list]) -> tuple[list[str], int | None]:
    """(the options, the gold option's index or None) of a sample whose
    options are contexts: the doc's option1, option2, ... with its answer
    naming one by number (winogrande), else each context's end after the
    words all of them share ("...because the trophy" -> "trophy")."""
    doc = sample.get("doc") if isinstance(sample.get("doc"), Mapping) else {}
    keys = [f"option{number}" for number in range(1, len(requests) + 1)]
    if all(isinstance(doc.get(key), str) and doc[key].strip() for key in keys):
        answer = str(doc.get("answer", "")).strip()
        gold = int(answer) - 1 if answer.isdigit() and 1 <= int(answer) <= len(keys) else None
        return [doc[key].strip() for key in keys], gold
    contexts = [str(request[0]) for request in requests]
    # The contexts differ in length: the shortest bounds the part they share.
    length = next(
        (at for at, characters in enumerate(zip(*contexts, strict=False)) if len(set(characters)) > 1),
        min(map(len, contexts)),
    )
    shared = contexts[0][:length]
    cut = max(shared.rfind(" "), shared.rfind("\n")) + 1
    ends = [context[cut:].strip() for context in contexts]
    return (ends if all(ends) else [context.strip() for context in contexts]), None


def _targets(value: Any) -> list[str]:
    """The texts a target gives: the text; each alias of a list (triviaqa's
    answer.aliases), also when written as its text "['2', 'two']", which
    lm-eval's writer logs and its doc_to_target reads back as the list; a
    number (an option's index, as lm-eval before 0.4.3 logged it) as its
    text. [] for what is none of these (no target, an object)."""
    if isinstance(value, str):
        parsed = fieldpath.parse_container(value)
        value = parsed if isinstance(parsed, list) and parsed else value
    items = value if isinstance(value, list) else [value]
    texts = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            return [value] if isinstance(value, str) and value else []
        if isinstance(item, float) and item.is_integer():
            item = int(item)
        texts.append(str(item))
    return [text for text in texts if text]


def _target_index(
    target: str, options: list[str], labels: list[str] | None, requests: list[list]
) -> int | None:
    """The option a multiple-choice target names: its position, its label
    (the doc's own, else the continuation) or its text."""
    text = target.strip()
    if text.isdigit() and int(text) < len(options):
        return int(text)
    for candidates in (labels or [str(request[1]).strip() for request in requests], options):
        if text in candidates:
            return candidates.index(text)
    return None


def _no_answer(value: Any) -> str:
    """What a sample holds where lm-eval logs the answers, which holds none."""
    shown = orjson.dumps(json_safe(value)).decode()[:60]
    if isinstance(value, list):
        return f"is {shown}, a list without the answer"
    return f"is {shown}, not a list holding the answer"


def _lettered(index: int, options: list[str]) -> str:
    return f"{OPTION_LETTERS[index]}. {options[index]}"


def _expected(text: str, *, question: str, language: str) -> list[float]:
    """The expected values of a target by the importers' one rule
    (scoring.imports.expected), GSM8K's "#### 18" read from its last line."""
    final = _FINAL_ANSWER.search(text)
    return expected_values(final.group(1) if final else text, question=question, language=language)


def _chat_prompt(text: str) -> str:
    """The last user message of a prompt lm-eval wrote as a chat (a JSON
    list of messages, --apply_chat_template); the text itself otherwise."""
    if not text.startswith("[{"):
        return text
    try:
        messages = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    users = [
        message.get("content")
        for message in messages
        if isinstance(message, Mapping) and message.get("role") == "user"
    ]
    return users[-1] if users and isinstance(users[-1], str) else text


def default_columns(samples: list[Mapping], given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The mapping in use: ``given`` (field -> path; an empty path turns a
    default off), else question_id <- doc_id, question <- the first doc
    field of QUESTION_KEYS the first samples hold as text (else the first
    prompt), answer <- filtered_resps and reference <- target."""
    given = dict(given or {})
    columns = {"question_id": "doc_id", "answer": "filtered_resps", "reference": "target"}
    question = next(
        (
            f"doc.{key}"
            for key in QUESTION_KEYS
            if samples and all(isinstance(lookup(sample, f"doc.{key}"), str) for sample in samples)
        ),
        None,
    )
    if question is None and samples:
        arguments = samples[0].get("arguments")
        question = "arguments.gen_args_0.arg_0" if isinstance(arguments, Mapping) else "arguments[0][0]"
    if question:
        columns["question"] = question
    for target, path in given.items():
        if path:
            columns[target] = path
        else:
            columns.pop(target, None)
    return columns


def _text_at(sample: Mapping, path: str, field_name: str) -> Any:
    """The value at ``path``; raises _SampleError when the sample has none."""
    value, why = find(sample, path)
    if value is MISSING:
        raise _SampleError(path, f"missing: {why} (mapped to {field_name})")
    return value


def _scores(sample: Mapping, answered: str | None, filter_name: str, *, suffix: bool) -> dict:
    scores = {}
    for name in metric_names(sample):
        key = f"{name},{filter_name}" if suffix else name
        scores[key] = {
            "value": json_safe(sample[name]),
            "answer": answered,
            "explanation": f"lm-eval filter {filter_name}",
        }
    return scores


def filter_of(sample: Mapping, occurrence: int = 1) -> str:
    """The filter a sample was logged under: its "filter"; a file from
    before lm-eval 0.4.3 names none, and logs a document once per filter, so
    its ``occurrence``-th time is "filter-<occurrence>" ("none" the first)."""
    name = sample.get("filter")
    if isinstance(name, str):
        return name
    return "none" if occurrence == 1 else f"filter-{occurrence}"


def convert_sample(
    sample: Mapping, columns: Mapping[str, str], options: ImportOptions, filter_name: str = ""
) -> list[dict]:
    """The run-log lines of one sample: one, or one per generation when it
    holds several. Raises _SampleError for what it cannot read."""
    sample_kind = kind(sample)
    language = options.language
    if columns.get("language"):
        language = _text_at(sample, columns["language"], "language")
    question_id = _text_at(sample, columns.get("question_id", "doc_id"), "question_id")
    if isinstance(question_id, int | float) and not isinstance(question_id, bool):
        question_id = str(int(question_id)) if float(question_id).is_integer() else str(question_id)
    question = MISSING
    if columns.get("question"):
        question = _text_at(sample, columns["question"], "question")
        if isinstance(question, str) and columns["question"].startswith("arguments"):
            question = _chat_prompt(question)
    reference = _text_at(sample, columns["reference"], "reference") if columns.get("reference") else MISSING
    targets = _targets(reference)
    filter_name = filter_name or filter_of(sample)
    answer_path = columns.get("answer", "filtered_resps")
    extra: dict[str, Any] = {}

    expected: list[float] = []
    if sample_kind == "multiple_choice" and answer_path in ("filtered_resps", "resps"):
        requests = _requests(sample)
        responses = sample["filtered_resps"] if answer_path == "filtered_resps" else sample.get("resps")
        if answer_path == "resps":
            responses = [
                r[0] if isinstance(r, list) and r and isinstance(r[0], list) else r for r in responses
            ]
        loglikelihoods = [_loglikelihood(response) for response in responses or ()]
        if len(loglikelihoods) != len(requests) or None in loglikelihoods:
            raise _SampleError(answer_path, "must hold one loglikelihood for each option")
        several_contexts = _several_contexts(requests)
        if several_contexts:
            options_text, gold = _context_options(sample, requests)
            labels: list[str] | None = options_text
        else:
            (options_text, labels), gold = _options(sample, requests), None
        if len(options_text) > len(OPTION_LETTERS):
            raise _SampleError("arguments", f"{len(options_text)} options are more than the letters A to Z")
        best = max(range(len(loglikelihoods)), key=lambda index: (loglikelihoods[index], -index))
        answers = [_lettered(best, options_text)]
        if isinstance(question, str):
            question = "\n".join(
                [question.rstrip(), *(_lettered(i, options_text) for i in range(len(options_text)))]
            )
        if targets or gold is not None:
            indexes = [_target_index(target, options_text, labels, requests) for target in targets]
            # The option is right by its letter, as an Inspect choice is:
            # the numbers its text holds are expected of no answer.
            named = [_lettered(index, options_text) for index in indexes if index is not None]
            if named and len(named) == len(targets):
                reference = " | ".join(named)
            elif gold is not None:
                reference = _lettered(gold, options_text)
            elif several_contexts:
                raise _SampleError(
                    columns.get("reference", "target"),
                    f"is {' | '.join(targets)!r}, which names none of the options (each option is another "
                    "context before the same continuation, as in winogrande): this layout is read when the "
                    "target is the option's index or the doc gives option1, option2, ... and answer",
                )
            else:
                reference = " | ".join(targets)
        extra["loglikelihoods"] = loglikelihoods
        scored_answer = answers[0]
    else:
        if answer_path in ("filtered_resps", "resps"):
            held = sample.get(answer_path)
            generations = sample.get("resps")
            generations = generations[0] if isinstance(generations, list) and generations else None
            if not isinstance(held, list) or not held or (answer_path == "resps" and generations == []):
                raise _SampleError(answer_path, _no_answer(held))
            filtered = lookup(sample, "filtered_resps[0]")
            raw = generations[0] if isinstance(generations, list) and len(generations) == 1 else None
            if isinstance(generations, list) and len(generations) > 1:
                answers = generations
            elif answer_path == "resps":
                answers = generations if isinstance(generations, list) else [generations]
            elif filtered == INVALID and isinstance(raw, str):
                # The filter extracted nothing: the model did answer, in its
                # whole generation, which "[invalid]" would hide from a judge.
                answers = [raw]
                extra["filtered"] = filtered
            else:
                answers = [filtered]
            scored_answer = filtered if isinstance(filtered, str) else None
            if len(answers) == 1 and isinstance(raw, str) and raw != answers[0]:
                extra["response"] = raw
        else:
            answers = [_text_at(sample, answer_path, "answer")]
            scored_answer = lookup(sample, "filtered_resps[0]")
            scored_answer = scored_answer if isinstance(scored_answer, str) else None
        for position, answer in enumerate(answers):
            if not isinstance(answer, str):
                where = answer_path if len(answers) == 1 else f"resps[0][{position}]"
                shown = orjson.dumps(json_safe(answer)).decode()[:60]
                raise _SampleError(where, f"is {shown}, not text: the answer is the model's text")
        if targets:
            # Aliases are joined as Inspect joins a target's parts; the first
            # alias that is a number gives the value ("2" of ["2", "two"]).
            reference = " | ".join(targets)
            for target in targets:
                expected = _expected(
                    target,
                    question=question if isinstance(question, str) else "",
                    language=language if isinstance(language, str) else "",
                )
                if expected:
                    break

    if columns.get("expected_values"):
        mapped = _text_at(sample, columns["expected_values"], "expected_values")
        expected = mapped if isinstance(mapped, list) else [mapped]
        expected = [
            _float(value) if isinstance(value, str) and _float(value) is not None else value
            for value in expected
        ]
    behaviour = "answer"
    if columns.get("expected_behaviour"):
        behaviour = _text_at(sample, columns["expected_behaviour"], "expected_behaviour")
        behaviour = behaviour.strip().lower() if isinstance(behaviour, str) else behaviour

    base: dict[str, Any] = {"question_id": question_id, "language": language}
    if isinstance(question, str) and question:
        base["question"] = question
    if isinstance(reference, str) and reference:
        base["reference"] = reference
    base["expected_behaviour"] = behaviour
    base["expected_values"] = expected
    if columns.get("stratum"):
        stratum = _text_at(sample, columns["stratum"], "stratum")
        if stratum is not None:
            base["stratum"] = stratum if not isinstance(stratum, int | float) else str(stratum)
    base.update(retrieved_ids=[], retrieved_values=[])
    lines = []
    for attempt, answer in enumerate(answers, start=1):
        line = dict(base, answer=answer, cited_ids=[], declined=False, attempt=attempt)
        if attempt == 1:
            line["lm_eval_scores"] = _scores(sample, scored_answer, filter_name, suffix=False)
            if extra:
                line["lm_eval"] = dict(extra, filter=filter_name)
        lines.append(line)
    return lines


_SOURCES = {"expected_values": "target", "attempt": "resps[0]"}


def _line_errors(
    number: int,
    sample: Mapping,
    columns: Mapping[str, str],
    options: ImportOptions,
    repetitions: int,
    filter_name: str = "",
) -> tuple[list[dict], list[LineError]]:
    where = f"(doc_id {sample.get('doc_id')!r})"
    try:
        lines = convert_sample(sample, columns, options, filter_name)
    except _SampleError as error:
        return [], [LineError(number, error.field, f"{error.message} {where}")]
    errors: list[LineError] = []
    seen = set()
    for line in lines:
        found = answer_errors(number, line, repetitions=repetitions)
        found += [error for error in question_errors(number, line) if error not in found]
        for error in found:
            source = columns.get(error.field or "", _SOURCES.get(error.field or "", error.field))
            message = error.message if source == error.field else f"as {error.field}, {error.message}"
            if (source, message) not in seen:
                seen.add((source, message))
                errors.append(LineError(number, source, f"{message} {where}"))
        if holds_nul(line) and ("nul", 0) not in seen:
            seen.add(("nul", 0))
            errors.append(
                LineError(number, None, f"holds the NUL character (\\u0000), which cannot be stored {where}")
            )
    return lines, errors


class _QuestionIds:
    """The question ids written so far, to refuse two documents that become
    one question (doc_id 5 and "5", 6.0 and 6), which the scorer would
    refuse later without saying which lines they came from."""

    def __init__(self, column: str):
        self.column = column
        self.seen: dict[str, tuple[int, Any]] = {}

    def repeated(self, number: int, sample: Mapping, lines: list[dict]) -> list[LineError]:
        """[] when the sample's question id is new, else the error naming both lines."""
        question_id = lines[0].get("question_id") if lines else None
        if not isinstance(question_id, str):
            return []
        given = lookup(sample, self.column)
        if question_id not in self.seen:
            self.seen[question_id] = (number, given)
            return []
        line, other = self.seen[question_id]
        message = (
            f"{self.column} {given!r} is question_id {question_id!r}, as {self.column} {other!r} on line "
            f"{line} is: each document needs its own"
        )
        return [LineError(number, self.column, message)]


def _check_options(options: ImportOptions) -> None:
    _check_labels(options, FIELDS, "an lm-eval sample")


# -- the interface -----------------------------------------------------------


@dataclass
class _Plan:
    """What a first reading of the whole file tells: the filters in order,
    the line of each document under the first, the metrics of the others
    (which join the first's line), each line's filter, the first samples
    and the most generations a sample holds."""

    filters: list[str] = field(default_factory=list)
    primary: dict[bytes, int] = field(default_factory=dict)
    others: dict[bytes, dict] = field(default_factory=dict)
    filter_names: dict[int, str] = field(default_factory=dict)
    first_samples: list[dict] = field(default_factory=list)
    repetitions: int = 1
    count: int = 0
    invalid: int = 0

    @property
    def first_filter(self) -> str | None:
        return self.filters[0] if self.filters else None

    def keeps(self, number: int, sample: Mapping) -> bool:
        """Whether the sample on ``number`` makes lines (its document under the first filter)."""
        return (
            self.filter_names.get(number) == self.first_filter
            and self.primary.get(_doc_key(sample)) == number
        )

    def joined(self, line: dict, sample: Mapping) -> dict:
        """``line`` with every filter's metrics, named "metric,filter", when the file has several."""
        if len(self.filters) > 1 and "lm_eval_scores" in line:
            first = self.first_filter
            scores = {f"{name},{first}": score for name, score in line["lm_eval_scores"].items()}
            scores.update(self.others.get(_doc_key(sample), {}))
            line["lm_eval_scores"] = scores
        return line


def _doc_key(sample: Mapping) -> bytes:
    return orjson.dumps(json_safe(sample.get("doc_id")))


def _plan(path: Path, collector: ErrorCollector, *, keep: int = DEFAULTS_FROM) -> _Plan:
    plan = _Plan()
    seen: dict[tuple[bytes, str], int] = {}
    occurrences: dict[bytes, int] = {}
    later: dict[bytes, int] = {}
    for number, sample in _samples(path, collector):
        plan.count += 1
        if len(plan.first_samples) < keep:
            plan.first_samples.append(sample)
        doc_key = _doc_key(sample)
        occurrences[doc_key] = occurrences.get(doc_key, 0) + 1
        filter_name = filter_of(sample, occurrences[doc_key])
        plan.filter_names[number] = filter_name
        if filter_name not in plan.filters:
            plan.filters.append(filter_name)
        if (doc_key, filter_name) in seen:
            message = (
                f"doc_id {sample.get('doc_id')!r} under filter {filter_name!r} is already on line "
                f"{seen[doc_key, filter_name]}"
            )
            collector.add([LineError(number, "doc_id", message)])
            continue
        seen[doc_key, filter_name] = number
        generations = lookup(sample, "resps[0]")
        if kind(sample) == "generate" and isinstance(generations, list):
            plan.repetitions = max(plan.repetitions, len(generations))
        if filter_name == plan.first_filter:
            plan.primary[doc_key] = number
            single = isinstance(generations, list) and len(generations) == 1
            if single and lookup(sample, "filtered_resps[0]") == INVALID and kind(sample) == "generate":
                plan.invalid += 1
        else:
            answered = lookup(sample, "filtered_resps[0]")
            later.setdefault(doc_key, number)
            plan.others.setdefault(doc_key, {}).update(
                _scores(sample, answered if isinstance(answered, str) else None, filter_name, suffix=True)
            )
    for doc_key, number in later.items():
        if doc_key not in plan.primary:
            message = (
                f"doc_id {orjson.loads(doc_key)!r} is logged under a later filter but not under "
                f"{plan.first_filter!r}, the file's first"
            )
            collector.add([LineError(number, "doc_id", message)])
    if plan.repetitions > MAX_REPETITIONS:
        message = (
            f"the samples hold {plan.repetitions} generations each; a run log holds at most "
            f"{MAX_REPETITIONS} repetitions"
        )
        collector.add([LineError(0, "resps", message, unit="file")])
    return plan


def _notes(plan: _Plan, columns: Mapping[str, str], found: _Suggested, options: ImportOptions) -> list[str]:
    notes = []
    kinds = {kind(sample) for sample in plan.first_samples}
    if "multiple_choice" in kinds:
        notes.append(
            "multiple choice (loglikelihood): the answer is the option with the highest loglikelihood, "
            "as lm-eval's acc reads it (acc_norm divides by the option's length and may pick another); "
            "the question lists the options lettered, and the reference is the option the target names"
        )
    if "generate" in kinds and plan.repetitions > 1:
        notes.append(
            f"each sample holds up to {plan.repetitions} generations (the task's repeats): each is an "
            "attempt, and lm-eval's filtered answer over them is kept with its metrics on attempt 1"
        )
    elif "generate" in kinds and columns.get("answer") == "filtered_resps" and plan.first_filter != "none":
        notes.append(
            f"the answer is lm-eval's filtered answer (filter {plan.first_filter}); map answer to "
            "resps for the model's whole generation"
        )
    if plan.invalid and columns.get("answer") == "filtered_resps":
        answers = f"{plan.invalid} answer is" if plan.invalid == 1 else f"{plan.invalid} answers are"
        their = "its" if plan.invalid == 1 else "their"
        notes.append(
            f"{answers} lm-eval's {INVALID} (the filter {plan.first_filter} extracted nothing): {their} "
            f"answer is the model's whole generation, and the filtered {INVALID} is kept as lm_eval.filtered"
        )
    if len(plan.filters) > 1:
        # With repeats the answers are the generations, which no filter changes.
        answer = "" if plan.repetitions > 1 else "the answer is the first's, and "
        notes.append(
            f"the file logs each document under {len(plan.filters)} filters ({', '.join(plan.filters)}): "
            f"{answer}every filter's metrics are kept, named metric,filter"
        )
    documents = len(plan.primary)
    if found.planned is not None and found.planned != documents:
        notes.append(
            f"the results file beside it says {found.planned} samples were evaluated; this file holds "
            f"{documents}"
        )
    if not found.model and not options.assistant_version:
        notes.append("the file does not name the model: give the assistant version")
    return notes


def preview(path: Path, options: ImportOptions, *, rows: int = 5, name: str = "") -> Preview:
    """What the first ``rows`` documents of the lm-eval samples file at
    ``path`` (uploaded as ``name``) become, read as convert reads them, with
    the versions it suggests (the model from the results file beside it,
    the task from its name), the paths a mapping can name, the mapping in
    use, notes on how the answer is read and the problems convert would
    name on those samples and on the whole file. Raises LogFileError for
    what convert refuses whole."""
    path = Path(path)
    _check_options(options)
    _check_file(path)
    collector = ErrorCollector(200)
    plan = _plan(path, collector)
    columns = default_columns(plan.first_samples, options.columns)
    found = suggested(path, name)
    assistant_version, set_version, set_name = suggested_versions(found)
    fields: dict[str, None] = {}
    for sample in plan.first_samples:
        fields.update(dict.fromkeys(sample_fields(sample)))
    shown = Preview(
        format=FORMAT,
        assistant_version=assistant_version,
        set_version=set_version,
        set_name=set_name,
        fields=list(fields),
        columns=columns,
        samples=len(plan.primary),
        notes=_notes(plan, columns, found, options),
    )
    errors: list[LineError] = []
    question_ids = _QuestionIds(columns.get("question_id", "doc_id"))
    for number, sample in _samples(path, ErrorCollector(0)):
        if len(shown.rows) >= rows:
            break
        if not plan.keeps(number, sample):
            continue
        shown.rows.append(_shown_row(sample))
        lines, found_errors = _line_errors(
            number, sample, columns, options, plan.repetitions, plan.filter_names[number]
        )
        found_errors = found_errors or question_ids.repeated(number, sample, lines)
        shown.lines.extend(plan.joined(line, sample) for line in (lines if not found_errors else []))
        errors.extend(found_errors)
    shown.errors = _in_units(list(collector.errors) + errors, path)
    return shown


def _shown_row(sample: Mapping) -> dict:
    """A sample as the preview shows it: the long prompt and hashes left out."""
    return {
        key: value
        for key, value in sample.items()
        if key not in ("arguments", "doc_hash", "prompt_hash", "target_hash")
    }


def convert(
    path: Path, out: BinaryIO, options: ImportOptions, *, max_errors: int = 200, name: str = ""
) -> int:
    """Write the lm-eval samples file at ``path`` (uploaded as ``name``) to
    ``out`` as a combined-form run log: a header, then one line per
    document (one per generation when it holds several); return the number
    of answer lines written.

    Raises LogFileError naming every problem on its line and sample path,
    up to ``max_errors``; nothing is written to ``out`` then. Refuses whole
    a file that is not lm-eval samples, samples without answers
    (loglikelihood and perplexity tasks), versions missing or not labels,
    more generations than a run log's repetitions allow and mapped fields
    that are not run-log fields. A sample is refused for a mapped path it
    lacks, an answer that is not text, a document given twice under one
    filter, one under a later filter that the first does not have, and what
    the run log's own checks refuse, two documents that become one
    question id, and a multiple-choice sample whose options are contexts
    when nothing names its gold option."""
    path = Path(path)
    _check_options(options)
    _check_file(path)
    collector = ErrorCollector(max_errors)
    found = suggested(path, name)
    assistant_version, set_version, _ = suggested_versions(found)
    header: dict[str, Any] = {}
    for key, value, what in (
        ("assistant_version", options.assistant_version or assistant_version, "the model"),
        ("set_version", options.set_version or set_version, "the task"),
    ):
        if not value:
            message = (
                f"missing: this file does not name {what} (no results file beside it, or a name that is "
                f"not lm-eval's); give the {key.replace('_', ' ')}"
            )
            collector.add([LineError(0, key, message, unit="file")])
        header[key] = value
    plan = _plan(path, collector)
    if plan.repetitions > MAX_REPETITIONS:
        _raise_if_any(collector, path)
    columns = default_columns(plan.first_samples, options.columns)
    written = 0
    question_ids = _QuestionIds(columns.get("question_id", "doc_id"))
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        for number, sample in _samples(path, ErrorCollector(0)):
            if not plan.keeps(number, sample):
                continue
            lines, errors = _line_errors(
                number, sample, columns, options, plan.repetitions, plan.filter_names[number]
            )
            errors = errors or question_ids.repeated(number, sample, lines)
            if errors:
                collector.add(errors)
                continue
            for line in lines:
                if not collector.total:
                    spool.write(orjson.dumps(plan.joined(line, sample), option=orjson.OPT_APPEND_NEWLINE))
                written += 1
        if not written and not collector.total:
            collector.add([LineError(0, None, "the file holds no samples", unit="file")])
        _raise_if_any(collector, path)
        if plan.repetitions > 1:
            header["repetitions"] = plan.repetitions
        out.write(orjson.dumps(header, option=orjson.OPT_APPEND_NEWLINE))
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    return written
