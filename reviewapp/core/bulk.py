"""Inserting many rows fast: COPY on PostgreSQL, batched inserts elsewhere."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import orjson
from django.db import connection
from psycopg.types.json import set_json_dumps

BATCH = 5000


def insert_rows(model, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
    """Insert ``rows`` (values in ``columns`` order, foreign keys as ``x_id``)
    into ``model``'s table in the current transaction; return the count.

    JSON columns take Python values; None in a nullable one is SQL NULL, as
    the ORM stores it (JSON null instead made ``field__isnull=False`` match
    every row). No save() and no signals: these are plain rows, written the
    fastest way the database offers.
    """
    fields = [model._meta.get_field(column) for column in columns]
    json_columns = [field.get_internal_type() == "JSONField" for field in fields]
    nullable = [field.null for field in fields]
    if connection.vendor == "postgresql":
        return _copy(model, fields, json_columns, nullable, rows)
    count = 0
    batch = []
    for row in rows:
        batch.append(model(**dict(zip(columns, row, strict=True))))
        if len(batch) >= BATCH:
            model.objects.bulk_create(batch)
            count += len(batch)
            batch.clear()
    model.objects.bulk_create(batch)
    return count + len(batch)


# The column types COPY's binary format is written in, by the base of each
# field's database type; a table with any other is copied as text.
_BINARY_TYPES = {
    "smallint": "int2",
    "integer": "int4",
    "bigint": "int8",
    "boolean": "bool",
    "varchar": "varchar",
    "text": "text",
    "jsonb": "jsonb",
    "double precision": "float8",
    "timestamp with time zone": "timestamptz",
}


def _binary_types(fields) -> list[str] | None:
    types = []
    for field in fields:
        base = (field.db_type(connection) or "").split("(")[0].strip().lower()
        if base not in _BINARY_TYPES:
            return None
        types.append(_BINARY_TYPES[base])
    return types


def _copy(model, fields, json_columns, nullable, rows) -> int:
    names = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    count = 0
    connection.ensure_connection()
    # Only the JSON columns are touched: a million answers' rows went
    # through every column to encode their two empty lists.
    encoded = [(index, nullable[index]) for index, is_json in enumerate(json_columns) if is_json]
    width = len(fields)
    # Binary where every column allows it: nothing escaped by psycopg and
    # parsed back by PostgreSQL (a million answers' 1 GB of lines took 40 %
    # less CPU in psycopg and half as long in the server).
    types = _binary_types(fields)
    statement = f"COPY {table} ({names}) FROM STDIN" + (" (FORMAT BINARY)" if types else "")
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        if types:
            # The JSON columns' text is encoded below (json_text), as in text COPY.
            set_json_dumps(_as_encoded, context=cursor.cursor)
            copy.set_types(types)
        for row in rows:
            if len(row) != width:
                raise ValueError(f"a row of {len(row)} values for the {width} columns {names}")
            if encoded:
                row = list(row)
                for index, null in encoded:
                    value = row[index]
                    if not (value is None and null):
                        row[index] = json_text(value)
            copy.write_row(row)
            count += 1
    return count


def _as_encoded(text: str) -> str:
    return text


# An empty list or dict, the usual value of many JSON columns, needs no encoder.
_EMPTY_TEXT = {list: "[]", dict: "{}"}


def json_text(value) -> str:
    """A JSON column's text for COPY: orjson's (the stdlib's took most of
    the time of storing a million checks), or the stdlib's where orjson
    would write something else: NaN and infinities, which orjson writes as
    null (the stdlib's NaN is refused by PostgreSQL, as it always was), and
    integers past 64 bits, which orjson refuses."""
    if not value and type(value) in _EMPTY_TEXT:
        return _EMPTY_TEXT[type(value)]
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)
    return text if _flat_and_finite(value) else json.dumps(value)


def _flat_and_finite(value) -> bool:
    """True when ``value`` is a dict, or a list of them, of plain values
    whose floats are finite (they add up to a finite sum). Anything else,
    and sums past the largest float, take the stdlib's slower way."""
    total = 0.0
    for row in value if type(value) is list else (value,):
        if type(row) is not dict:
            return False
        for item in row.values():
            if type(item) is float:
                total += item
            elif type(item) is dict or type(item) is list:
                return False
    return math.isfinite(total)


def refresh_statistics(*models) -> None:
    """ANALYZE the tables a bulk load just filled, on PostgreSQL, before the
    queries that read them: a million rows written by COPY leave the planner
    statistics of an empty table (autovacuum may be off or behind), and the
    adding-up query of a second 1M-answer run then ran for over 7 minutes on
    a plan made for none. Inside the load's transaction it counts the rows
    the transaction wrote."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
