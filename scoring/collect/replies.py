"""What an assistant answers: the reply and its evidence, the errors of an
attempt, and reading a reply from a response (the --mapping paths)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

EVIDENCE_FIELD = "reviewapp"
DEFAULT_ANSWER_PATH = "choices.0.message.content"
DEFAULT_TIMEOUT_S = 600
MAX_CONCURRENCY = 256

# What a reply may give, and the type each must have.
REPLY_FIELDS: dict[str, type] = {
    "answer": str,
    "retrieved_ids": list,
    "retrieved_values": list,
    "cited_ids": list,
    "declined": bool,
    "retrieved_records": list,
    "tool_calls": list,
}
_TYPE_NAMES = {str: "text", list: "a list", bool: "true or false"}

INTERRUPTED = "collection interrupted"
_NOT_SENT = f"{INTERRUPTED} before the question was sent"
_IN_FLIGHT = f"{INTERRUPTED} while waiting for the answer"

# How long the main loop sleeps at most between looks at Ctrl-C and deadlines.
_POLL_S = 0.1
# How often a command's process is checked for a deadline or a cancellation.
_COMMAND_POLL_S = 0.05
# The share of a response body quoted in a status reason.
_EXCERPT_CHARACTERS = 200
# A reachability check needs no more than this, whatever the attempts' timeout.
_CONNECT_CHECK_S = 10
# Bad lines of a question set listed before the rest are only counted.
MAX_LISTED_ERRORS = 20


class CollectError(Exception):
    """Collection cannot start: one sentence saying why (bad arguments,
    unreadable input, an unreachable endpoint, an existing output file)."""


class AttemptFailed(Exception):
    """One attempt ended without an answer: its ``status`` (error, timeout,
    refused_quota, cancelled) and ``reason``."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Reply:
    """What one attempt answered, with the evidence it was given."""

    answer: str
    retrieved_ids: list = field(default_factory=list)
    retrieved_values: list = field(default_factory=list)
    cited_ids: list = field(default_factory=list)
    declined: bool = False
    # retrieved_records and tool_calls, when the reply gives them.
    extras: dict = field(default_factory=dict)


class Assistant(Protocol):
    def ask(
        self, question: Mapping, *, attempt: int, timeout_s: float, cancelled: threading.Event
    ) -> Reply: ...

    def close(self) -> None: ...


# -- reading replies ---------------------------------------------------------


PathParts = tuple[str, ...]


def _split_path(path: str) -> PathParts:
    parts = tuple(path.split("."))
    if not path or any(not part for part in parts):
        raise ValueError(f"{path!r} is not a dotted path such as choices.0.message.content")
    return parts


def load_mapping(path: Path) -> dict[str, PathParts]:
    """The paths a mapping file names, by reply field.

    The file is a JSON object from field names (answer, retrieved_ids,
    retrieved_values, cited_ids, declined, retrieved_records, tool_calls) to
    dotted paths. Refuses, with CollectError, a file that cannot be read or
    is not such an object, an unknown field and a path that is not dotted."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CollectError(f"{path}: cannot read the mapping ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CollectError(f"{path}: the mapping is not JSON ({error})") from None
    if not isinstance(value, dict) or not value:
        raise CollectError(f"{path}: the mapping must be a JSON object from reply fields to dotted paths")
    mapping = {}
    for name, dotted in value.items():
        if name not in REPLY_FIELDS:
            raise CollectError(
                f"{path}: the mapping names {name!r}, which is not one of {', '.join(REPLY_FIELDS)}"
            )
        if not isinstance(dotted, str):
            raise CollectError(f"{path}: the path of {name} must be text such as choices.0.message.content")
        try:
            mapping[name] = _split_path(dotted)
        except ValueError as error:
            raise CollectError(f"{path}: the path of {name}: {error}") from None
    return mapping


_ABSENT = object()


def _lookup(document: object, parts: PathParts) -> object:
    value = document
    for part in parts:
        if isinstance(value, dict):
            value = value.get(part, _ABSENT)
        elif isinstance(value, list) and part.isdigit():
            index = int(part)
            value = value[index] if index < len(value) else _ABSENT
        else:
            return _ABSENT
        if value is _ABSENT:
            return _ABSENT
    return value


@dataclass(frozen=True, slots=True)
class ReplyShape:
    """Where a reply's fields are in a JSON document: ``required`` paths make
    an attempt an error when missing, ``optional`` ones leave the field
    empty."""

    required: dict[str, PathParts]
    optional: dict[str, PathParts]

    def mapped(self, mapping: Mapping[str, PathParts]) -> ReplyShape:
        """This shape with the fields ``mapping`` names read from its paths, each required."""
        return ReplyShape(
            required={**self.required, **mapping},
            optional={name: parts for name, parts in self.optional.items() if name not in mapping},
        )


_EVIDENCE = tuple(name for name in REPLY_FIELDS if name != "answer")
CHAT_SHAPE = ReplyShape(
    required={"answer": _split_path(DEFAULT_ANSWER_PATH)},
    optional={name: (EVIDENCE_FIELD, name) for name in _EVIDENCE},
)
COMMAND_SHAPE = ReplyShape(required={"answer": ("answer",)}, optional={name: (name,) for name in _EVIDENCE})


def reply_from_document(document: object, shape: ReplyShape) -> Reply:
    """The reply a JSON document gives, read as ``shape`` says.

    Raises AttemptFailed (status "error") naming the path of a required field
    the document lacks or holds null at, and the field of a value of the
    wrong type (a list of ids holds text, a list of values numbers)."""
    if not isinstance(document, dict):
        raise AttemptFailed("error", f"the response is JSON {type(document).__name__}, not an object")
    if EVIDENCE_FIELD in document and not isinstance(document[EVIDENCE_FIELD], dict | None):
        raise AttemptFailed("error", f'the response\'s "{EVIDENCE_FIELD}" is not an object')
    given = {}
    for name, parts in shape.required.items():
        value = _lookup(document, parts)
        if value is _ABSENT or value is None:
            what = "has no" if value is _ABSENT else "has null at"
            raise AttemptFailed("error", f"the response {what} {'.'.join(parts)} (the {name})")
        given[name] = value
    for name, parts in shape.optional.items():
        value = _lookup(document, parts)
        if value is not _ABSENT and value is not None:
            given[name] = value
    for name, value in given.items():
        expected = REPLY_FIELDS[name]
        if type(value) is not expected:
            shown = json.dumps(value, ensure_ascii=False)[:60]
            raise AttemptFailed(
                "error", f"the response's {name} must be {_TYPE_NAMES[expected]}, not {shown}"
            )
    for name in ("retrieved_ids", "cited_ids"):
        if not all(isinstance(item, str) for item in given.get(name, ())):
            raise AttemptFailed("error", f"the response's {name} must be a list of text ids")
    if not all(_is_number(item) for item in given.get("retrieved_values", ())):
        raise AttemptFailed("error", "the response's retrieved_values must be a list of numbers")
    return Reply(
        answer=given["answer"],
        retrieved_ids=given.get("retrieved_ids", []),
        retrieved_values=given.get("retrieved_values", []),
        cited_ids=given.get("cited_ids", []),
        declined=given.get("declined", False),
        extras={name: given[name] for name in ("retrieved_records", "tool_calls") if name in given},
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text[:_EXCERPT_CHARACTERS] + ("…" if len(text) > _EXCERPT_CHARACTERS else "")
