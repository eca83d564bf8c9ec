"""The fields of answers and questions, and the rules for their values:
version labels, set names, question ids, languages, NUL and the encoding."""

from __future__ import annotations

import functools
import json
import re

from scoring.logfile.errors import LineError

ANSWER_FIELDS = {
    "question_id": str,
    "language": str,
    "retrieved_ids": list,
    "retrieved_values": list,
    "answer": str,
    "cited_ids": list,
    "declined": bool,
}

_ANSWER_NAMES, _ANSWER_TYPES = tuple(ANSWER_FIELDS), tuple(ANSWER_FIELDS.values())

# An answer's own fields: a line whose status is not "ok" has no answer, and
# may leave them out (or give them empty or null).
ANSWER_CONTENT_FIELDS = frozenset({"retrieved_ids", "retrieved_values", "answer", "cited_ids", "declined"})

# A log that declares no repetitions holds one attempt per question: that is
# how it is read. Planning and collecting new runs start from spec 004's
# default instead, three attempts per question, which stable resolution needs.
DEFAULT_REPETITIONS = 1
PLANNED_REPETITIONS = 3
DEFAULT_TIMEOUT_S = 600
# Bounds that catch a slip (600 repetitions for a 600 s timeout) while leaving
# room for any real plan.
MAX_REPETITIONS = 100
MAX_TIMEOUT_S = 24 * 60 * 60
REPEATS_MAX_LENGTH = 200
# A stated clock skew beyond a day is a slip (seconds given as milliseconds,
# or a time zone taken for skew), not a clock.
MAX_CLOCK_SKEW_MS = 24 * 60 * 60 * 1000

QUESTION_FIELDS = {
    "question_id": str,
    "language": str,
    "expected_behaviour": str,
    "expected_values": list,
}

# Optional question fields and the types they may hold (None is always allowed).
QUESTION_OPTIONAL = {
    "question": str,
    # A reference answer in words, for the model graders that compare with one.
    "reference": str,
    "expected_series": str,
    "expected_period": str,
    "expected_unit": str,
    "expected_caveats": list,
    "stratum": str,
    "split": str,
    # Questions that share a passage or document name the same cluster: their
    # answers are not independent draws, and every interval counts them as one.
    "cluster": str,
    # The follow-up every setup is sent when the question needs more from the
    # user, and the turns allowed (scoring.logfile.followups).
    "follow_up": dict,
}

# Fields that mark a log in the spec's combined form, which carries the
# judgement (expected behaviour and values) beside each answer.
COMBINED_FIELDS = ("expected_behaviour", "expected_values")

BEHAVIOURS = ("answer", "decline")
SPLITS = ("tuning", "sealed")

RUN_FILE_NAME = re.compile(r"^answers_run_(?P<assistant_version>.+)_set-(?P<set_version>[^/]+)\.jsonl$")
SET_FILE_NAME = re.compile(r"^questions_set-(?P<set_version>[^/]+)\.jsonl$")

_TYPE_NAMES = {str: "a string", list: "a list", bool: "true or false", dict: "an object"}

LABEL_MAX_LENGTH = 100
SET_NAME_MAX_LENGTH = 100
QUESTION_ID_MAX_LENGTH = 200
LANGUAGE_MAX_LENGTH = 20
# The widest text each optional question field may hold, as the tables that
# keep them allow.
QUESTION_TEXT_LIMITS = {
    "expected_series": 200,
    "expected_unit": 200,
    "expected_period": 100,
    "stratum": 100,
    "cluster": 200,
}

_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]*")
_LABEL_CHARACTER = re.compile(r"[A-Za-z0-9._+\-]")
_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+\-]*")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
_LABEL_RULE = "ASCII letters, digits, '.', '_', '-' and '+', starting with a letter or a digit"


def _shown(value: str) -> str:
    """A value quoted for a message, control characters escaped, cut short."""
    return json.dumps(value[:40], ensure_ascii=False) + ("…" if len(value) > 40 else "")


def _character(character: str) -> str:
    if character == "\x00":
        return "the NUL character (\\u0000)"
    if character == " ":
        return "a space"
    if not character.isprintable():
        return f"the control character U+{ord(character):04X}"
    return repr(character)


def _length_problem(value: str, limit: int) -> str | None:
    if not value:
        return "empty"
    if len(value) > limit:
        return f"{len(value)} characters long, more than the {limit} allowed"
    return None


def label_problem(value: str) -> str | None:
    """Why ``value`` cannot be a version label (None when it can): a label
    holds 1 to 100 ASCII letters, digits, '.', '_', '-' and '+', and starts
    with a letter or a digit."""
    if problem := _length_problem(value, LABEL_MAX_LENGTH):
        return problem
    if _LABEL.fullmatch(value):
        return None
    if not _LABEL_CHARACTER.match(value[0]) or value[0] in "._+-":
        return f"{_shown(value)} starts with {_character(value[0])}; a label starts with a letter or a digit"
    bad = next(c for c in value if not _LABEL_CHARACTER.match(c))
    return f"{_shown(value)} holds {_character(bad)}; a label holds only {_LABEL_RULE}"


def set_name_problem(value: str) -> str | None:
    """Why ``value`` cannot name a question set (None when it can): the rule
    of version labels, with spaces allowed inside."""
    if problem := _length_problem(value, SET_NAME_MAX_LENGTH):
        return problem
    if _SET_NAME.fullmatch(value) and not value.endswith(" "):
        return None
    bad = next((c for c in value if c != " " and not _LABEL_CHARACTER.match(c)), None)
    if bad is None:
        return (
            f"{_shown(value)} starts or ends with a space or a punctuation mark; "
            f"a set name holds {_LABEL_RULE}"
        )
    return f"{_shown(value)} holds {_character(bad)}; a set name holds only {_LABEL_RULE}, and spaces inside"


def question_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a question id (None when it can): 1 to 200
    printable characters, not only spaces."""
    if not value.strip():
        return "empty"
    if problem := _length_problem(value, QUESTION_ID_MAX_LENGTH):
        return problem
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        return f"{_shown(value)} holds {_character(bad)}; an id holds only printable characters"
    return None


def language_problem(value: str) -> str | None:
    """Why ``value`` cannot be a language (None when it can): a short code
    such as en, fr or pt-BR, at most 20 characters."""
    if not value.strip():
        return "empty"
    if len(value) <= LANGUAGE_MAX_LENGTH and _LANGUAGE.fullmatch(value):
        return None
    return (
        f"{_shown(value)} is not a language code such as en, fr or pt-BR "
        f"(at most {LANGUAGE_MAX_LENGTH} characters)"
    )


# A run holds a handful of languages, each checked once.
_language_problem_cached = functools.lru_cache(maxsize=1024)(language_problem)

_NUL_ESCAPE = "\\u0000"


def holds_nul(value) -> bool:
    """True when a string anywhere in ``value`` (keys included) holds NUL."""
    if type(value) is str:
        return "\x00" in value
    if type(value) is dict:
        return any("\x00" in key or holds_nul(item) for key, item in value.items())
    if type(value) is list:
        return any(holds_nul(item) for item in value)
    return False


def _nul_error(number: int, record: dict) -> LineError | None:
    for name, value in record.items():
        if "\x00" in name or holds_nul(value):
            field = None if "\x00" in name else name
            return LineError(
                number, field, "holds the NUL character (\\u0000), which cannot be stored: remove it"
            )
    return None


# First bytes of files that are not UTF-8 text, and what to do about them.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip-compressed", "gunzip"),
    (b"PK\x03\x04", "a zip archive", "unzip"),
    (b"BZh", "bzip2-compressed", "bunzip2"),
    (b"\xfd7zXZ\x00", "xz-compressed", "unxz"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "unzstd"),
)


def encoding_problem(head: bytes) -> str | None:
    """Why a file whose first bytes are ``head`` is not UTF-8 JSON Lines
    (None when nothing says so): compressed, UTF-16 or UTF-32."""
    for magic, what, tool in _COMPRESSED:
        if head.startswith(magic):
            return f"this file is {what}: decompress it ({tool}) and upload the .jsonl inside"
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "this file is UTF-32: save it as UTF-8"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "this file is UTF-16: save it as UTF-8"
    # UTF-16 without a byte-order mark: ASCII text with a zero byte beside
    # each character. A stray NUL elsewhere is left to the line it is on.
    if b"\x00" in head and max(head[0::2].count(0), head[1::2].count(0)) > len(head) * 0.2:
        return "this file is UTF-16: save it as UTF-8"
    return None


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_error(field: str, expected: type, value) -> str:
    return f"{field} must be {_TYPE_NAMES[expected]}, not {json.dumps(value)[:60]}"


_NUMBER_TYPES = frozenset({int, float})
_STRING_TYPE = frozenset({str})


def _all_numbers(values: list) -> bool:
    # map(type) runs in C: this is on the path of every line of every run.
    return set(map(type, values)) <= _NUMBER_TYPES


def _all_strings(values: list) -> bool:
    return set(map(type, values)) <= _STRING_TYPE


_MISSING = object()
