"""What the README promises a newcomer, checked against the code it describes."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def configuration_table() -> list[str]:
    """The rows of the README's configuration table, up to the first line that is not one."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("| variable | default | meaning |")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("| "):
            break
        rows.append(line)
    return rows


def test_the_configuration_table_names_every_variable_the_settings_read():
    settings = (ROOT / "reviewapp" / "settings.py").read_text()
    read = set(re.findall(r'env(?:_[a-z]+)?\("([A-Z0-9_]+)"', settings))
    # The object store's settings, read from the environment handed to s3_storage.
    read |= set(re.findall(r'environ(?:\.get\(|\[)"([A-Z0-9_]+)"', settings))
    named = set(re.findall(r"`([A-Z0-9_]+)`", " ".join(row.split(" | ")[0] for row in configuration_table())))
    assert sorted(read - named) == []
    assert sorted(named - read) == []


def test_the_api_examples_name_the_address_once():
    # Examples that hard-code the port break for anyone who set ADDRESS.
    text = (ROOT / "README.md").read_text()
    assert re.findall(r"curl [^\n]*http://127\.0\.0\.1:8000", text) == []
