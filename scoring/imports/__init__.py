"""Answers from other tools, turned into this app's run log.

Each reader takes a file in another tool's format and writes a run log in
the combined form of spec 000 (recipe 4.1): a header line naming the
versions, then one line per answer that also carries its question's
expected behaviour and values, its text and its reference, so the question
set is taken from the same file. The app and the scoring CLI then read that
log as they read their own; nothing here touches a database.

Formats (``FORMATS``):

- ``inspect``: an Inspect AI eval log, ``.eval`` or ``.json``, read with
  Inspect's own reader (the ``inspect`` extra), sample by sample;
- ``ragas``: JSON Lines with Ragas' SingleTurnSample fields (user_input,
  retrieved_contexts, response, reference, ...);
- ``lm-eval``: lm-evaluation-harness ``--log_samples`` output
  (samples_<task>_<date>.jsonl), document by document;
- ``csv``: CSV with any column names, mapped to the run log's fields.

What a source field becomes is the ``columns`` mapping of ImportOptions:
run-log field -> source column (CSV, Ragas), metadata key (Inspect) or path
in a sample (lm-eval: doc.question, resps[0][0]). Each
reader fills in its defaults (``default_columns``) for what is not given.

This package only re-exports: the shared pieces are in
scoring.imports.common, the dispatch in scoring.imports.readers, and the
readers import from those, never from here.
"""

from scoring.imports.common import (
    FORMAT_LABELS,
    FORMATS,
    MAPPING_FIELDS,
    TARGET_FIELDS,
    Checked,
    ImportOptions,
    Preview,
    parse_mapping,
)
from scoring.imports.readers import check, convert, detect_format, preview

__all__ = [
    "FORMATS",
    "FORMAT_LABELS",
    "MAPPING_FIELDS",
    "TARGET_FIELDS",
    "Checked",
    "ImportOptions",
    "Preview",
    "check",
    "convert",
    "detect_format",
    "parse_mapping",
    "preview",
]
