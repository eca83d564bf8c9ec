"""The public files in bench/corpus/ convert as their expected.json says, and
the checker itself tells a wrong expectation from a right one."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[3] / "bench" / "import_corpus.py"
_spec = importlib.util.spec_from_file_location("import_corpus", _PATH)
import_corpus = importlib.util.module_from_spec(_spec)
sys.modules["import_corpus"] = import_corpus  # dataclasses look their module up
_spec.loader.exec_module(import_corpus)

CSV = "question_id,question,answer\nq1,How many days?,Five days: 5.\nq2,How many hours?,About 8 hours.\n"


def _corpus(tmp_path: Path, expected: dict) -> Path:
    family = tmp_path / "corpus" / "csv"
    family.mkdir(parents=True)
    (family / "two.csv").write_text(CSV, encoding="utf-8")
    (family / "expected.json").write_text(json.dumps(expected), encoding="utf-8")
    return family.parent


def _files():
    return [(o.family, o.name, o) for o in import_corpus.run()]


@pytest.mark.parametrize(
    ("family", "name", "outcome"), _files(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_each_public_file_gives_what_it_must(family, name, outcome):
    assert outcome.ok, f"{family}/{name}: {outcome.said}"


def test_the_checker_counts_the_answers_written(tmp_path):
    corpus = _corpus(
        tmp_path, {"two.csv": {"answers": 2, "args": ["--assistant-version", "a1", "--set-version", "s1"]}}
    )
    assert [o.ok for o in import_corpus.run(corpus=corpus)] == [True]
    corpus = _corpus(
        tmp_path / "x",
        {"two.csv": {"answers": 3, "args": ["--assistant-version", "a1", "--set-version", "s1"]}},
    )
    (outcome,) = import_corpus.run(corpus=corpus)
    assert not outcome.ok and "2 answers written" in outcome.said


def test_the_checker_counts_the_attempts_not_run_among_the_lines_written(tmp_path):
    pytest.importorskip("inspect_ai")
    from tests.inspect_logs import statistics_samples, write_inspect_log

    family = tmp_path / "corpus" / "inspect"
    family.mkdir(parents=True)
    samples = [sample for sample in statistics_samples(2, epochs=2) if sample.epoch == 1]
    write_inspect_log(family / "cut.eval", samples=samples, sample_ids=[1, 2], epochs=2, status="cancelled")
    (family / "expected.json").write_text(json.dumps({"cut.eval": {"answers": 4}}), encoding="utf-8")
    (outcome,) = import_corpus.run(corpus=family.parent)
    assert outcome.ok, outcome.said
    assert outcome.said == "2 answers and 2 attempts not run written to"


def test_the_checker_wants_the_refusal_it_names_and_every_file_listed(tmp_path):
    corpus = _corpus(tmp_path, {"two.csv": {"refused": "not a csv"}})
    (outcome,) = import_corpus.run(corpus=corpus)
    assert not outcome.ok
    (corpus / "csv" / "stray.csv").write_text(CSV, encoding="utf-8")
    assert [(o.name, o.ok) for o in import_corpus.run(corpus=corpus)][-1] == ("stray.csv", False)


def test_the_checker_wants_numeric_accuracy_as_expected_json_gives_it(tmp_path):
    # The two references hold no number: numeric accuracy does not apply.
    args = ["--assistant-version", "a1", "--set-version", "s1"]
    corpus = _corpus(tmp_path, {"two.csv": {"answers": 2, "args": args, "numeric_accuracy": "n/a"}})
    assert [o.ok for o in import_corpus.run(corpus=corpus)] == [True]
    corpus = _corpus(tmp_path / "x", {"two.csv": {"answers": 2, "args": args, "numeric_accuracy": "0/2"}})
    (outcome,) = import_corpus.run(corpus=corpus)
    assert not outcome.ok and "numeric accuracy n/a, not 0/2" in outcome.said
