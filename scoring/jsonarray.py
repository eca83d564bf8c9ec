"""A file that is one JSON array of records, as Ragas' repository keeps its
datasets (``[{"user_input": ...}, ...]``): read whole, within a size limit,
its items numbered from 1 where JSON Lines number their lines."""

from __future__ import annotations

from pathlib import Path

import orjson

from scoring.fieldpath import kind

# An array is parsed whole, so it is read up to this size; a larger file is
# written as JSON Lines (one object a line), which is read line by line.
MAX_JSON_ARRAY_BYTES = 64 * 1024 * 1024


class JsonArrayError(ValueError):
    """A file that cannot be read as a JSON array: one sentence saying why."""


def read_json_array(path: Path) -> list:
    """The items of the JSON array in ``path``. Raises JsonArrayError for a
    file over MAX_JSON_ARRAY_BYTES, not UTF-8, not JSON, or JSON that is not
    an array; OSError when it cannot be read."""
    size = path.stat().st_size
    if size > MAX_JSON_ARRAY_BYTES:
        raise JsonArrayError(
            f"a JSON array is read whole, up to {_size(MAX_JSON_ARRAY_BYTES)}, and this one holds "
            f"{_size(size)}: write it as JSON Lines, one object a line (Ragas' to_jsonl does)"
        )
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise JsonArrayError(f"line {line} is not UTF-8 text; save the file as UTF-8") from None
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        reason = str(error).split(":")[0]
        raise JsonArrayError(f"not JSON ({reason} at line {error.lineno}, column {error.colno})") from None
    if not isinstance(items, list):
        raise JsonArrayError(f"the file is JSON but not an array of objects (it holds {kind(items)})")
    return items


def _size(size: int) -> str:
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size:,} bytes"
