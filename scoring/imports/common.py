"""What the import readers share: the formats, the run-log fields a source
column can fill, the --columns mapping, and the options and preview types.

The readers (scoring.imports.inspect_log, scoring.imports.tabular) import
these from here, never from the package, which imports them back."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from scoring.logfile import LineError

FORMATS = ("inspect", "ragas", "lm-eval", "csv")
FORMAT_LABELS = {
    "inspect": "Inspect AI eval log (.eval or .json)",
    "ragas": "Ragas-style JSON Lines (user_input, response, retrieved_contexts, reference)",
    "lm-eval": "lm-evaluation-harness samples (samples_<task>_<date>.jsonl from --log_samples)",
    "csv": "CSV with any column names",
}

# The run-log fields a source column can fill, in the order an import page
# offers them. Fields a reader cannot fill from its format are left out of
# its own list (``fields_for``).
TARGET_FIELDS = (
    "question_id",
    "question",
    "language",
    "answer",
    "retrieved_contexts",
    "retrieved_ids",
    "retrieved_values",
    "cited_ids",
    "declined",
    "reference",
    "expected_values",
    "expected_behaviour",
    "stratum",
    "attempt",
)
# What a mapping may name: the fields above, and for an Inspect log's
# metadata retrieved_records (records with id and values only, where
# retrieved_contexts takes passages or records alike).
MAPPING_FIELDS = (*TARGET_FIELDS, "retrieved_records")


# A comma starts a new pair only when a field name and "=" follow it, so
# that a column name may hold a comma.
_PAIR_START = re.compile(
    r",(?=\s*(?:" + "|".join(sorted(map(re.escape, MAPPING_FIELDS), key=len, reverse=True)) + r")\s*=)"
)


def parse_mapping(texts: list[str]) -> dict[str, str]:
    """Field -> column from ``--columns`` values such as
    "question=Question,answer=Bot answer"; "stratum=" (no column) turns the
    field's default off. Refuses (ValueError) a part without "=", a field
    that is not a run-log field and a field given twice."""
    mapping: dict[str, str] = {}
    for text in texts:
        for part in _PAIR_START.split(text):
            if not part.strip():
                continue
            target, equals, column = part.partition("=")
            target, column = target.strip(), column.strip()
            if not equals:
                raise ValueError(f'"{part.strip()}" is not field=column')
            if target not in MAPPING_FIELDS:
                fields = ", ".join(MAPPING_FIELDS)
                raise ValueError(f'"{target}" is not a field of the run log; the fields are {fields}')
            if target in mapping:
                raise ValueError(f'the field "{target}" is given twice')
            mapping[target] = column
    return mapping


@dataclass(frozen=True)
class ImportOptions:
    """What the person importing chose: the versions (empty: the file's own,
    when it names them), the question set's name, the language of answers
    whose source gives none, and the field mapping."""

    assistant_version: str = ""
    set_version: str = ""
    set_name: str = ""
    language: str = "en"
    columns: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Checked:
    """What converting a whole file gives, its lines discarded: the ``lines``
    it would write, or its ``errors`` (the first max_errors) and how many
    there are in all (``total``)."""

    lines: int = 0
    errors: list[LineError] = field(default_factory=list)
    total: int = 0


@dataclass
class Preview:
    """What an import would make of a file, read from its start only.

    ``assistant_version``/``set_version``/``set_name`` are the file's own
    suggestions (Inspect: model, task and task version), for the person to
    confirm or change. ``fields`` are the names a mapping can use (CSV
    columns, JSON keys, Inspect metadata keys); ``columns`` the mapping in
    use, defaults filled in. ``rows`` are the first samples as read, ``lines``
    the same as run-log lines, ``errors`` what is wrong with them.
    ``samples`` is how many the file holds; an Inspect log also gives its
    ``status`` ("success", "started", "cancelled", "error"), the attempts
    it ``planned`` (samples x epochs), and a ``note`` saying what an
    incomplete log's import makes of the attempts it did not run; ``notes``
    say how the reader reads this file (lm-eval: how the answer is chosen)."""

    format: str
    assistant_version: str = ""
    set_version: str = ""
    set_name: str = ""
    fields: list[str] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)
    samples: int | None = None
    status: str = ""
    planned: int | None = None
    note: str = ""
    rows: list[dict] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The whole file converted, its lines discarded (scoring.imports.check):
    # set by those who show a preview, so it says what the import will say.
    checked: Checked | None = None
