"""Judge reports as files: YAML for .yaml and .yml, TOML for .toml, JSON otherwise (spec 003).

The three hold the same document. TOML has no null, so a TOML file leaves out
every key whose value is null, and a reader takes a missing key for a null;
a null inside a list has no such form: such a report is written as JSON beside
the path asked for, since the model calls behind it are made and paid for.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import tomli_w
import yaml

YAML_SUFFIXES = (".yaml", ".yml")
TOML_SUFFIX = ".toml"


def without_nulls(value: Any, where: str = "") -> Any:
    """``value`` with every null-valued key of every mapping left out, as a TOML file holds it.

    Refuses (ValueError, naming the place) a null inside a list, which no key can stand for.
    """
    if isinstance(value, dict):
        return {
            key: without_nulls(item, f"{where}.{key}" if where else str(key))
            for key, item in value.items()
            if item is not None
        }
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if item is None:
                raise ValueError(f"{where}[{index}] is null inside a list, which TOML cannot hold")
        return [without_nulls(item, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def write_document(path: str | Path, document: dict) -> None:
    """Write ``document`` to ``path`` as YAML, TOML or (indented) JSON by the path's suffix.

    A document TOML cannot hold is written as JSON to the same name with
    .json, and then refused (ValueError, saying where it went).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (*YAML_SUFFIXES, TOML_SUFFIX):
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        return
    # Through JSON first, so YAML and TOML hold exactly what the JSON file does
    # (tuples as lists, float subclasses as floats).
    plain = json.loads(json.dumps(document))
    if suffix == TOML_SUFFIX:
        try:
            text = tomli_w.dumps(without_nulls(plain))
        except ValueError as error:
            kept = path.with_suffix(".json")
            write_document(kept, document)
            raise ValueError(f"{error}; the report was written as JSON to {kept} instead") from None
    else:
        text = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")


def read_document(path: str | Path) -> Any:
    """The document in a file written by ``write_document``, read by its suffix as it was written.

    Refuses (ValueError) text that does not parse in that format.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    if suffix == TOML_SUFFIX:
        return tomllib.loads(text)
    if suffix in YAML_SUFFIXES:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(str(error)) from None
    return json.loads(text)
