"""What format a file is in, from its name and its first bytes.

Only the start of a file is read: its first few KB, and its first line (up
to a megabyte) when that line is a JSON object to look into. A file is never
parsed whole here.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from scoring.logfile import encoding_problem, is_header

HEAD_BYTES = 8 * 1024
FIRST_LINE_MAX_BYTES = 1024 * 1024

ZIP_MAGIC = b"PK\x03\x04"

# An Inspect log written as JSON starts with its "version", then "status"
# and "eval" (EvalLog's field order); "eval" is an object near the start.
_INSPECT_START = re.compile(r'\{\s*"(?:version|status|eval)"\s*:')
_INSPECT_VERSION = re.compile(r'"version"\s*:\s*\d')
_INSPECT_EVAL = re.compile(r'"eval"\s*:\s*\{')

# The keys lm-eval's writer gives every --log_samples line: doc_id, and the
# responses, raw or filtered.
LM_EVAL_MARKS = ("resps", "filtered_resps")

# lm-eval 0.4.0 to 0.4.2 wrote a task's samples as one indented JSON array.
_LM_EVAL_ARRAY = re.compile(r'\[\s*\{\s*"doc_id"\s*:')

# Ragas' SingleTurnSample fields that mark a Ragas row.
RAGAS_MARKS = ("user_input", "response")

CLAIMED = {
    "inspect": "an Inspect eval log",
    "ragas": "Ragas-style JSON Lines",
    "lm-eval": "lm-evaluation-harness samples",
    "csv": "CSV",
}


@dataclass(frozen=True)
class Look:
    """What the start of a file shows. ``kind`` is one of: empty, zip,
    encoded (compressed or UTF-16/32; ``detail`` says which and what to do),
    binary, inspect, ragas (``detail`` "array" for one JSON array of Ragas
    rows), lm_eval (``detail`` "array" for the one array lm-eval before 0.4.3
    wrote), app (this app's own run log or question set), json (a JSON
    object of no known kind, ``detail`` its keys, or "document" for one
    object spread over lines), json_array (of objects
    of no known kind; ``detail``: the first one's keys), csv (``detail``:
    the header's first cells), text."""

    kind: str
    detail: str = ""


def look(path: Path, name: str = "") -> Look:
    """What ``path`` (uploaded as ``name``) looks like from its start."""
    name = (name or path.name).lower()
    with open(path, "rb") as stream:
        head = stream.read(HEAD_BYTES)
    if not head.strip():
        return Look("empty")
    if head.startswith(ZIP_MAGIC):
        return Look("zip")
    if name.endswith(".eval"):
        return Look("inspect")
    if problem := encoding_problem(head):
        return Look("encoded", problem)
    if b"\x00" in head:
        return Look("binary")
    # A byte that is not UTF-8 is the reader's to name on its line; the
    # shape of the start is what tells the format.
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff").lstrip()
    if text.startswith("{"):
        return _look_json(path, name, text)
    if text.startswith("["):
        return Look("lm_eval", "array") if _LM_EVAL_ARRAY.match(text) else _look_array(path)
    first_line = text.split("\n", 1)[0].rstrip("\r")
    if "," in first_line or name.endswith(".csv"):
        return Look("csv", _header_shown(first_line))
    return Look("text")


def _look_json(path: Path, name: str, text: str) -> Look:
    if _INSPECT_START.match(text) and _INSPECT_VERSION.search(text) and _INSPECT_EVAL.search(text):
        return Look("inspect")
    record = _first_object(path)
    if record is None:
        if name.endswith(".json") and _INSPECT_VERSION.search(text) and _INSPECT_EVAL.search(text):
            return Look("inspect")
        # A line holding only "{" is never JSON Lines: one indented document.
        if text.split("\n", 1)[0].strip() == "{":
            return Look("json", "document")
        return Look("json")
    if "doc_id" in record and any(mark in record for mark in LM_EVAL_MARKS):
        return Look("lm_eval")
    if any(mark in record for mark in RAGAS_MARKS):
        return Look("ragas")
    if is_header(record):
        return Look("app", "a run log")
    if "question_id" in record and "answer" in record:
        return Look("app", "a run log")
    if "question_id" in record and "expected_behaviour" in record:
        return Look("app", "a question set")
    return Look("json", ", ".join(list(record)[:8]))


def _look_array(path: Path) -> Look:
    """A JSON array: "ragas" when its first item is an object with Ragas'
    fields (Ragas' repository keeps datasets so), else "json_array" with the
    first object's keys when it has one."""
    with open(path, "rb") as stream:
        start = stream.read(FIRST_LINE_MAX_BYTES).decode("utf-8", errors="replace")
    start = start.removeprefix("\ufeff").lstrip().removeprefix("[").lstrip()
    try:
        record, _ = json.JSONDecoder().raw_decode(start)
    except (ValueError, RecursionError):  # nested past the decoder's depth: no tool writes that
        return Look("json_array")
    if not isinstance(record, dict):
        return Look("json_array")
    if any(mark in record for mark in RAGAS_MARKS):
        return Look("ragas", "array")
    return Look("json_array", ", ".join(list(record)[:8]))


def _first_object(path: Path) -> dict | None:
    """The first non-blank line as a JSON object (None when it is not one or
    is longer than FIRST_LINE_MAX_BYTES)."""
    with open(path, "rb") as stream:
        while raw := stream.readline(FIRST_LINE_MAX_BYTES + 1):
            if len(raw) > FIRST_LINE_MAX_BYTES:
                return None
            raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
            return record if isinstance(record, dict) else None
    return None


def _header_shown(first_line: str) -> str:
    try:
        cells = next(csv.reader([first_line]), [])
    except csv.Error:
        return ""
    shown = ", ".join(repr(cell.strip()) for cell in cells[:6])
    return shown + (", ..." if len(cells) > 6 else "")


def detect_format(path: Path, name: str = "") -> str | None:
    """The format of ``path``, "inspect", "ragas", "lm-eval" or "csv", from its
    name and first bytes; None when it is none of them (this app's own run
    log, say)."""
    kind = look(path, name).kind
    if kind in ("zip", "inspect"):
        return "inspect"
    if kind == "lm_eval":
        return "lm-eval"
    if kind in ("ragas", "csv"):
        return kind
    return None


# Another tool's files, as a phrase after "this is", for a file sent where
# this app's own run log was expected.
_OTHER_TOOLS = {
    "inspect": "an Inspect AI eval log",
    "ragas": "Ragas-style JSON Lines (user_input, response, ...)",
    "lm_eval": "lm-evaluation-harness samples (--log_samples)",
    "csv": "CSV",
}


def other_tool(path: Path, name: str = "") -> str | None:
    """What another tool's file ``path`` is ("an Inspect AI eval log"), or
    None when it is not one of the formats the importer reads. A zip counts
    only when its name says Inspect (.eval): another zip is just compressed."""
    seen = look(path, name)
    if seen.kind == "zip":
        return _OTHER_TOOLS["inspect"] if (name or path.name).lower().endswith(".eval") else None
    if (seen.kind, seen.detail) == ("ragas", "array"):
        return "a Ragas dataset, one JSON array (user_input, response, ...)"
    return _OTHER_TOOLS.get(seen.kind)


# What a file is, as a phrase after "this file is".
_WHAT = {
    "zip": "a zip archive (an Inspect .eval log?)",
    "binary": "binary data",
    "inspect": "an Inspect eval log",
    "ragas": "Ragas-style JSON Lines (user_input, response, ...)",
    "lm_eval": "lm-evaluation-harness samples (--log_samples)",
    "json_array": "one JSON array",
    "csv": "CSV",
    "text": "plain text",
}

# The kinds each claimed format accepts; any other is a problem. A JSON
# object of no known kind may still be JSON Lines with other keys, mapped.
_ACCEPTED = {
    "inspect": {"zip", "inspect", "json", "empty"},
    # A JSON array of objects is read as the rows of JSON Lines are.
    "ragas": {"ragas", "json", "json_array", "empty"},
    "lm-eval": {"lm_eval", "json", "empty"},
    "csv": {"csv", "text", "empty"},
}


def format_problem(path: Path, name: str, claimed: str) -> str | None:
    """Why ``path`` (uploaded as ``name``) is not in the ``claimed`` format
    ("inspect", "ragas", "lm-eval" or "csv"), as a sentence; None when nothing says so.
    Refuses (ValueError) an unknown format."""
    if claimed not in CLAIMED:
        raise ValueError(f"unknown import format {claimed!r}: the formats are {', '.join(CLAIMED)}")
    seen = look(path, name)
    if (seen.kind, seen.detail) == ("json", "document") and claimed == "ragas":
        return (
            "this file is one JSON object spread over many lines, not JSON Lines (one object a line) "
            "or a JSON array of rows: write the rows one object a line, as Ragas' to_jsonl does"
        )
    if seen.kind in _ACCEPTED[claimed]:
        return None
    wanted = CLAIMED[claimed]
    if seen.kind == "encoded":
        return seen.detail
    if seen.kind == "app":
        return (
            f"this file is already {seen.detail} in this app's own format, not {wanted}: "
            "it needs no import, upload it as it is"
        )
    if seen.kind == "json":
        if seen.detail == "document":
            return f"this file is one JSON object spread over many lines, not {wanted}"
        if seen.detail:
            return f"this file is JSON Lines (its first object has {seen.detail}), not {wanted}"
        return f"this file is JSON, not {wanted}"
    if seen.kind == "csv":
        header = f" (its first line is a header: {seen.detail})" if seen.detail else ""
        hint = "; import it as csv" if claimed != "csv" else ""
        return f"this file looks like CSV{header}, not {wanted}{hint}"
    hint = ""
    if seen.kind in ("zip", "inspect") and claimed != "inspect":
        hint = "; import it as inspect"
    elif seen.kind == "ragas":
        hint = "; import it as ragas"
    elif seen.kind == "lm_eval":
        hint = "; import it as lm-eval"
    return f"this file is {_WHAT[seen.kind]}, not {wanted}{hint}"
