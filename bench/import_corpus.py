"""Convert every public file in bench/corpus/ as a user would, and check each
against what its folder's expected.json says it must give.

    .venv/bin/python bench/import_corpus.py            # every family
    .venv/bin/python bench/import_corpus.py inspect qa # some families

Each folder bench/corpus/FAMILY/ holds files other tools wrote and an
expected.json mapping each file's name to:
  "answers": N / "questions": N   what converting must write, or
  "refused": "phrase"             a phrase the refusal must contain;
  "args" (or "command"): the CLI arguments, "{file}" where the file goes
                          (default: the file alone; for "qa" commands the
                          file goes after the task);
  "numeric_accuracy": "k/n" or "n/a" (optional): what scoring the converted
                          file must give, "n/a" where no question has an
                          expected number (code, JSON, words, dates);
  "source": where the file came from (repository, path, commit, licence).
The files go through scoring.imports' own command line, the same path as
the app's import page and POST /api/imports, so what passes here is what a
user gets. Exit 0 when every file gives what it must; 1 otherwise.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scoring.imports.__main__ import main as imports_main
from scoring.runner import score_file

CORPUS = Path(__file__).resolve().parent / "corpus"
# "N answers written to", "N questions written to", or for an incomplete
# Inspect log "N answers and M attempts not run written to": N + M lines.
_WRITTEN = re.compile(r": (\d+) (answers|questions)(?: and (\d+) attempts? not run)? written to ")


@dataclass(frozen=True)
class Outcome:
    family: str
    name: str
    ok: bool
    said: str


def arguments(entry: dict, path: Path, out: Path) -> list[str]:
    given = list(entry.get("args") or entry.get("command") or [])
    if "{file}" in given:
        args = [str(path) if arg == "{file}" else arg for arg in given]
    elif given[:1] == ["qa"]:
        args = [*given[:2], str(path), *given[2:]]
    else:
        args = [str(path), *given]
    return [*args, "--out", str(out)]


def check(folder: Path, name: str, entry: dict) -> Outcome:
    family, path = folder.name, folder / name
    if not path.is_file():
        return Outcome(family, name, False, "listed in expected.json but not in the folder")
    numeric = None
    with tempfile.TemporaryDirectory() as folder:
        err = io.StringIO()
        out = Path(folder) / "out.jsonl"
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = imports_main(arguments(entry, path, out))
            except SystemExit as exit_:  # argparse refuses bad arguments this way
                code = exit_.code
        if code == 0 and "numeric_accuracy" in entry and "questions" not in entry:
            numeric = _numeric_accuracy(out)
    said = " ".join(err.getvalue().split())
    if "refused" in entry:
        ok = code != 0 and entry["refused"].lower() in said.lower()
        return Outcome(family, name, ok, said[:300])
    written = _WRITTEN.search(said)
    want = entry.get("answers", entry.get("questions"))
    lines = written and int(written.group(1)) + int(written.group(3) or 0)
    ok = code == 0 and written is not None and lines == want
    if ok and numeric != entry.get("numeric_accuracy", numeric):
        return Outcome(family, name, False, f"numeric accuracy {numeric}, not {entry['numeric_accuracy']}")
    return Outcome(family, name, ok, said[:300] if not ok else written.group(0).strip(": "))


def _numeric_accuracy(run_log: Path) -> str:
    """Numeric accuracy of a converted run log over all its answers: "k/n",
    or "n/a" where it applies to no question."""
    counts = score_file(run_log, None).slices.get("all", {}).get("numeric_accuracy")
    return "n/a" if counts is None else f"{counts['k']}/{counts['n']}"


def run(families: list[str] | None = None, corpus: Path = CORPUS) -> list[Outcome]:
    outcomes = []
    for folder in sorted(corpus.iterdir()) if corpus.is_dir() else ():
        if not (folder / "expected.json").is_file() or (families and folder.name not in families):
            continue
        expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
        for name, entry in sorted(expected.items()):
            outcomes.append(check(folder, name, entry))
        # A file may sit in a subfolder with the files its tool wrote beside it
        # (lm-eval's results file names the model of the samples beside it).
        listed = set(expected) | {"expected.json", "README.md"}
        outcomes += [
            Outcome(folder.name, name, False, "in the folder but not in expected.json")
            for name in sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
            if name not in listed
        ]
    return outcomes


def main(argv: list[str]) -> int:
    outcomes = run(argv or None)
    for outcome in outcomes:
        mark = "ok  " if outcome.ok else "FAIL"
        print(f"{mark} {outcome.family}/{outcome.name}: {outcome.said}")
    failed = sum(not o.ok for o in outcomes)
    print(f"{len(outcomes) - failed} of {len(outcomes)} files give what they must")
    return 1 if failed or not outcomes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
