"""Inspect AI eval logs imported as run logs (scoring.imports.inspect_log).

Every valid log here is made with Inspect's own classes and written by its
own writer (tests/inspect_logs.py); only the bad inputs are edited by hand.
"""

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

from scoring import imports
from scoring.__main__ import main as score_main
from scoring.imports import ImportOptions, inspect_log
from scoring.logfile import LineError, LogFileError, questions_from_combined, read_answers
from tests.inspect_logs import (
    CREATED,
    EXAMPLES,
    inspect_sample,
    statistics_question,
    statistics_samples,
    write_inspect_log,
)

OPTIONS = ImportOptions()


def at(seconds: float) -> str:
    from datetime import timedelta

    return (CREATED + timedelta(seconds=seconds)).isoformat()


def four_samples():
    """One right number, one wrong number the evidence does not hold, one
    error and one time limit; inputs as text, chat messages and attachments."""
    return [
        inspect_sample(
            "a01",
            question="What was the unemployment rate in the Northern region in 2023?",
            target="5.2",
            contexts=[
                "LBR_UNEMP_PCT, Northern region, 2023: 5.2%.",
                "LBR_UNEMP_PCT, Northern region, 2022: 5.6%.",
            ],
            answer="Unemployment in the Northern region was 5.2% in 2023.",
            started_s=0,
            total_time=1.5,
        ),
        inspect_sample(
            "a02",
            question="What was consumer price inflation in 2024?",
            target="3.1",
            contexts=["CPI_INFL_PCT, national, 2024: 3.1%.", "CPI_INFL_PCT, national, 2023: 4.0%."],
            answer="Inflation was 3.4% in 2024.",
            scores={"match": ("I", "3.4", "expected 3.1")},
            chat=True,
            started_s=10,
            total_time=2.5,
        ),
        inspect_sample(
            "a03",
            question="What was the under-five mortality rate in 2022?",
            target="41",
            contexts=["HLTH_U5MR, national, 2022: 41 per 1,000 live births."],
            answer="",
            error="RateLimitError: Error code: 429 - rate limit exceeded",
            attach=True,
            started_s=20,
            total_time=0.5,
        ),
        inspect_sample(
            "a04",
            question="What share of households had internet access in 2024?",
            target=["62.3", "62.3%"],
            contexts=["ICT_HH_INET_PCT, national, 2024: 62.3%."],
            answer="The share of households",
            limit=("time", 30),
            scores={"match": ("I", None, None)},
            chat=True,
            started_s=30,
            total_time=30.0,
        ),
    ]


EXPECTED_LINES = [
    {
        "question_id": "a01",
        "attempt": 1,
        "language": "en",
        "question": "What was the unemployment rate in the Northern region in 2023?",
        "reference": "5.2",
        "expected_behaviour": "answer",
        "expected_values": [5.2],
        "retrieved_ids": [],
        "retrieved_values": [5.2, 5.6],
        "retrieved_contexts": [
            "LBR_UNEMP_PCT, Northern region, 2023: 5.2%.",
            "LBR_UNEMP_PCT, Northern region, 2022: 5.6%.",
        ],
        "answer": "Unemployment in the Northern region was 5.2% in 2023.",
        "cited_ids": [],
        "declined": False,
        "submitted_at": at(0),
        "received_at": at(1.5),
        "latency_ms": 1500.0,
        "inspect_scores": {
            "match": {
                "value": "C",
                "answer": "Unemployment in the Northern region was 5.2% in 2023.",
                "explanation": None,
            }
        },
    },
    {
        "question_id": "a02",
        "attempt": 1,
        "language": "en",
        "question": "What was consumer price inflation in 2024?",
        "reference": "3.1",
        "expected_behaviour": "answer",
        "expected_values": [3.1],
        "retrieved_ids": [],
        "retrieved_values": [3.1, 4.0],
        "retrieved_contexts": ["CPI_INFL_PCT, national, 2024: 3.1%.", "CPI_INFL_PCT, national, 2023: 4.0%."],
        "answer": "Inflation was 3.4% in 2024.",
        "cited_ids": [],
        "declined": False,
        "submitted_at": at(10),
        "received_at": at(12.5),
        "latency_ms": 2500.0,
        "inspect_scores": {"match": {"value": "I", "answer": "3.4", "explanation": "expected 3.1"}},
    },
    {
        "question_id": "a03",
        "attempt": 1,
        "language": "en",
        "question": "What was the under-five mortality rate in 2022?",
        "reference": "41",
        "expected_behaviour": "answer",
        "expected_values": [41.0],
        "retrieved_ids": [],
        "retrieved_values": [41.0],
        "retrieved_contexts": ["HLTH_U5MR, national, 2022: 41 per 1,000 live births."],
        "status": "error",
        "status_reason": "RateLimitError: Error code: 429 - rate limit exceeded",
        "submitted_at": at(20),
        "stopped_at": at(20.5),
        "latency_ms": 500.0,
        "inspect_scores": {},
    },
    {
        "question_id": "a04",
        "attempt": 1,
        "language": "en",
        "question": "What share of households had internet access in 2024?",
        "reference": "62.3 | 62.3%",
        "expected_behaviour": "answer",
        "expected_values": [62.3],
        "retrieved_ids": [],
        "retrieved_values": [62.3],
        "retrieved_contexts": ["ICT_HH_INET_PCT, national, 2024: 62.3%."],
        "status": "timeout",
        "status_reason": "time limit of 30 seconds reached",
        "submitted_at": at(30),
        "stopped_at": at(60),
        "latency_ms": 30000.0,
        "inspect_scores": {"match": {"value": "I", "answer": None, "explanation": None}},
    },
]


def converted(path: Path, options: ImportOptions = OPTIONS, **kwargs) -> tuple[int, list[dict]]:
    out = io.BytesIO()
    count = inspect_log.convert(path, out, options, **kwargs)
    return count, [orjson.loads(line) for line in out.getvalue().splitlines()]


def refusal(path: Path, options: ImportOptions = OPTIONS, **kwargs) -> LogFileError:
    with pytest.raises(LogFileError) as caught:
        inspect_log.convert(path, io.BytesIO(), options, **kwargs)
    return caught.value


def log_name(layout: str) -> str:
    return "log.json" if layout == "json" else "log.eval"


@pytest.fixture(scope="module")
def four(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("four")
    return {
        layout: write_inspect_log(
            folder / f"{layout}-{log_name(layout)}", samples=four_samples(), layout=layout, condense=False
        )
        for layout in ("eval", "journal", "json")
    }


# -- the library -----------------------------------------------------------


def test_it_does_not_import_inspect_until_a_log_is_read():
    code = "import sys, scoring.imports, scoring.imports.inspect_log; print('inspect_ai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_it_says_how_to_install_inspect_when_it_is_missing(monkeypatch, four):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    error = refusal(four["eval"])
    assert error.errors[0].unit == "file"
    assert "install it with pip install '.[inspect]'" in error.errors[0].message


# -- what a log becomes ----------------------------------------------------


@pytest.mark.parametrize("layout", ["eval", "journal", "json"])
def test_it_converts_each_layout_to_the_same_lines(four, layout):
    count, lines = converted(four[layout])
    assert count == 4
    assert lines[0] == {"assistant_version": "openai-gpt-4o", "set_version": "regional_statistics-0"}
    assert lines[1:] == EXPECTED_LINES


def test_it_reads_the_layouts_inspect_writes(four):
    with zipfile.ZipFile(four["eval"]) as finished:
        assert {"header.json", "summaries.json", "_journal/start.json"} <= set(finished.namelist())
    with zipfile.ZipFile(four["journal"]) as interrupted:
        names = set(interrupted.namelist())
    assert "header.json" not in names
    assert "summaries.json" not in names
    assert {"_journal/start.json", "_journal/summaries/1.json", "samples/a01_epoch_1.json"} <= names
    assert json.loads(four["json"].read_text())["version"] == 2


@pytest.mark.parametrize("layout", ["eval", "json"])
def test_it_resolves_attachment_references(four, layout):
    from inspect_ai.log import read_eval_log_sample

    stored = read_eval_log_sample(str(four[layout]), "a03", 1)
    reference = stored.input[-1].content[0].text
    assert reference.startswith("attachment://")
    assert stored.attachments == {reference.removeprefix("attachment://"): EXPECTED_LINES[2]["question"]}
    _, lines = converted(four[layout])
    assert lines[3]["question"] == EXPECTED_LINES[2]["question"]


def test_its_lines_pass_the_run_log_reader(four, tmp_path):
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as out:
        inspect_log.convert(four["eval"], out, OPTIONS)
    assert [(answer.line, answer.record["status"]) for answer in read_answers(path)] == [
        (2, "ok"),
        (3, "ok"),
        (4, "error"),
        (5, "timeout"),
    ]
    assert [question["question_id"] for question in questions_from_combined(path)] == [
        "a01",
        "a02",
        "a03",
        "a04",
    ]


def test_its_run_log_scores_as_worked_by_hand(four, tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as out:
        imports.convert(four["eval"], out, "inspect", OPTIONS)
    assert score_main([str(path), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    measures = scores["slices"]["all"]
    counts = {name: (measure["k"], measure["n"]) for name, measure in measures.items()}
    # Four questions expecting an answer: a01 states the expected 5.2; a02
    # states 3.4, which no passage holds; a03 ended in an error and a04 in a
    # time limit, failures that count against both rates. The two answers
    # state two numbers (years aside), one of them unsupported.
    assert counts == {
        "numeric_accuracy": (1, 4),
        "answer_rate": (2, 4),
        "unsupported_numbers": (1, 2),
        "unsupported_answers": (1, 2),
    }
    assert [(finding["question_id"], finding["kind"]) for finding in scores["findings"]] == [
        ("a02", "numeric"),
        ("a02", "unsupported"),
        ("a03", "failed"),
        ("a04", "failed"),
    ]
    timing = scores["timing"]["all"]
    e2e = timing["e2e"]["by_source"]["timestamps"]
    assert (e2e["n"], e2e["mean"], e2e["p50"], e2e["p90"]) == (2, 2.0, 2.0, 2.5)
    assert timing["failures"]["counts"] == {"error": 1, "timeout": 1, "cancelled": 0, "refused_quota": 0}
    assert (timing["failures"]["wait"]["n"], timing["failures"]["wait"]["mean"]) == (2, 15.25)


@pytest.fixture
def read_whole(monkeypatch) -> list:
    """The logs Inspect's read_eval_log is asked to read whole, samples and all."""
    import inspect_ai.log

    asked = []
    real = inspect_ai.log.read_eval_log

    def read_eval_log(log_file, header_only=False, **kwargs):
        if not header_only:
            asked.append(log_file)
        return real(log_file, header_only=header_only, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", read_eval_log)
    return asked


def test_it_reads_an_eval_log_sample_by_sample(four, monkeypatch, read_whole):
    monkeypatch.setattr(inspect_log, "BATCH_SAMPLES", 3)
    for layout in ("eval", "journal"):
        assert converted(four[layout])[1][1:] == EXPECTED_LINES
    assert read_whole == []


def test_it_reads_with_inspects_public_functions_alone_when_its_private_names_move(four, monkeypatch):
    import inspect_ai._util.constants as constants
    import inspect_ai.log

    # Inspect's own modules hold the name already; only a new import misses it.
    monkeypatch.delattr(constants, "get_deserializing_context")
    public = inspect_ai.log.read_eval_log_samples_by_id
    calls = []

    def read_by_id(*args, **kwargs):
        calls.append(args)
        return public(*args, **kwargs)

    monkeypatch.setattr(inspect_ai.log, "read_eval_log_samples_by_id", read_by_id)
    assert converted(four["eval"])[1][1:] == EXPECTED_LINES
    assert calls, "Inspect's public reader read the samples"


def not_run(question_id: str, attempt: int, status: str) -> dict:
    return {
        "question_id": question_id,
        "attempt": attempt,
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [],
        "retrieved_ids": [],
        "retrieved_values": [],
        "status": "cancelled",
        "status_reason": f"not run: the run stopped (the log's status is {status!r}) before this sample's "
        f"epoch {attempt} ended",
        "inspect_scores": {},
    }


def test_it_writes_the_samples_an_interrupted_run_did_not_reach_as_cancelled_attempts(tmp_path):
    from inspect_ai.log import read_eval_log

    path = write_inspect_log(
        tmp_path / "log.eval",
        samples=statistics_samples(3),
        sample_ids=[1, 2, 3, 4, 5],
        layout="journal",
        status="started",
    )
    header = read_eval_log(str(path), header_only=True)
    assert (header.status, header.eval.dataset.sample_ids) == ("started", [1, 2, 3, 4, 5])
    shown = inspect_log.preview(path, OPTIONS)
    assert (shown.status, shown.samples, shown.planned) == ("started", 3, 5)
    assert shown.note == (
        "the log's status is started: 3 of the 5 planned samples are present (5 samples x 1 epoch); "
        "the 2 not run are imported as cancelled attempts, counted in N"
    )
    count, lines = converted(path)
    assert count == 5
    assert [line["question_id"] for line in lines[1:4]] == ["1", "2", "3"]
    assert lines[4:] == [not_run("4", 1, "started"), not_run("5", 1, "started")]


def test_a_cancelled_logs_attempts_not_run_count_in_n(tmp_path, capsys):
    samples = [sample for sample in statistics_samples(2, epochs=2) if (sample.id, sample.epoch) != (1, 2)]
    path = write_inspect_log(
        tmp_path / "log.eval", samples=samples, sample_ids=[1, 2, 3], epochs=2, status="cancelled"
    )
    shown = inspect_log.preview(path, OPTIONS)
    assert (shown.status, shown.samples, shown.planned) == ("cancelled", 3, 6)
    assert shown.note == (
        "the log's status is cancelled: 3 of the 6 planned samples are present (3 samples x 2 epochs); "
        "the 3 not run are imported as cancelled attempts, counted in N"
    )
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        assert inspect_log.convert(path, out, OPTIONS) == 6
    lines = [orjson.loads(line) for line in run.read_bytes().splitlines()]
    assert [(line["question_id"], line["attempt"], line.get("status", "ok")) for line in lines[1:]] == [
        ("1", 1, "ok"),
        ("2", 1, "ok"),
        ("2", 2, "ok"),
        ("3", 1, "cancelled"),
        ("1", 2, "cancelled"),
        ("3", 2, "cancelled"),
    ]
    assert score_main([str(run), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    counts = {name: (figure["k"], figure["n"]) for name, figure in scores["slices"]["all"].items()}
    # Every planned attempt is in the answer rate's N. Numeric accuracy counts
    # question 1's attempt not run with the value its epoch 1 expects; sample
    # 3 is in no epoch, so no target says whether it expects a number.
    assert (counts["answer_rate"], counts["numeric_accuracy"]) == ((3, 6), (3, 4))
    assert [
        (finding["question_id"], finding["kind"])
        for finding in scores["findings"]
        if finding["kind"] == "failed"
    ] == [("3", "failed"), ("1", "failed"), ("3", "failed")]


def test_a_finished_log_says_nothing_of_its_plan(four):
    shown = inspect_log.preview(four["eval"], OPTIONS)
    assert (shown.status, shown.samples, shown.planned, shown.note) == ("success", 4, 4, "")


def test_it_lists_a_drained_runs_samples_from_their_summaries(tmp_path):
    path = write_inspect_log(
        tmp_path / "log.eval", samples=list(statistics_samples(2)), sample_ids=[1, 2, 3], logged_samples=2
    )
    assert converted(path)[0] == 2


def test_it_names_a_sample_a_finished_log_plans_but_lacks(tmp_path):
    path = write_inspect_log(tmp_path / "log.eval", samples=list(statistics_samples(2)), sample_ids=[1, 2, 3])
    assert [(error.line, error.field, error.unit) for error in refusal(path).errors] == [(3, None, "sample")]
    assert (
        refusal(path)
        .errors[0]
        .message.startswith(
            "Inspect could not read this sample (IndexError: Sample id 3 for epoch 1 not found"
        )
    )


def test_it_takes_attempts_from_epochs_and_repetitions_from_the_plan(tmp_path):
    path = write_inspect_log(tmp_path / "log.eval", samples=2, epochs=2)
    _, lines = converted(path)
    assert lines[0] == {
        "assistant_version": "openai-gpt-4o",
        "set_version": "regional_statistics-0",
        "repetitions": 2,
    }
    assert [(line["question_id"], line["attempt"]) for line in lines[1:]] == [
        ("1", 1),
        ("2", 1),
        ("1", 2),
        ("2", 2),
    ]
    assert lines[1]["answer"] == statistics_question(0)["answer"]
    assert lines[3]["submitted_at"] == at(4.0)


def test_it_names_a_failure_by_the_limit_that_stopped_the_sample(tmp_path):
    stops = [
        ({"limit": ("token", 1000)}, "error", "token limit of 1000 reached"),
        ({"limit": ("message", 50)}, "error", "message limit of 50 reached"),
        ({"limit": ("working", 120)}, "timeout", "working limit of 120 seconds reached"),
        ({"limit": ("operator", 0)}, "cancelled", "stopped by the operator"),
        ({"limit": ("cost", 2.5)}, "error", "cost limit of 2.5 reached"),
        (
            {"error": "CancelledError('Cancelled via cancel scope')"},
            "cancelled",
            "CancelledError('Cancelled via cancel scope')",
        ),
        ({"error": "ValueError: " + "x" * 600}, "error", "ValueError: " + "x" * 487 + "…"),
    ]
    samples = [
        inspect_sample(f"s{index}", question="How many?", target="1", answer="", **stop)
        for index, (stop, _, _) in enumerate(stops)
    ]
    _, lines = converted(write_inspect_log(tmp_path / "log.eval", samples=samples))
    assert [(line["status"], line["status_reason"]) for line in lines[1:]] == [
        (status, reason) for _, status, reason in stops
    ]
    assert "answer" not in lines[1]


def test_it_keeps_inspect_scores_as_plain_json(tmp_path):
    sample = inspect_sample(
        1,
        question="What was the rate?",
        target="4.1",
        answer="It was 4.1%.",
        scores={
            "model_graded_fact": (float("nan"), None, "the grader failed"),
            "rubric": ({"period": 1, "unit": 0}, "yes", None),
            "includes": (True, "4.1", None),
        },
    )
    _, lines = converted(write_inspect_log(tmp_path / "log.eval", samples=[sample]))
    assert lines[1]["inspect_scores"] == {
        "model_graded_fact": {"value": None, "answer": None, "explanation": "the grader failed"},
        "rubric": {"value": {"period": 1, "unit": 0}, "answer": "yes", "explanation": None},
        "includes": {"value": True, "answer": "4.1", "explanation": None},
    }


EVIDENCE_METADATA = {
    "retrieval": {
        "records": [
            {
                "id": "FS_UNDERNOURISH_PCT",
                "values": [7.6, 7.9],
                "label": "Prevalence of undernourishment",
                "period": "2024",
                "unit": "%",
                "caveats": ["provisional"],
                "score": 0.93,
            },
            {"id": "POP_TOTAL", "values": [21503]},
        ],
        "k": 2,
    },
    "cited": ["FS_UNDERNOURISH_PCT", "EDU_STATS_2024"],
    "lang": "fr",
    "should": "Decline",
    "refused": True,
    "group": "food security",
    "expected": [7.6],
}
EVIDENCE_COLUMNS = {
    "retrieved_records": "retrieval.records",
    "cited_ids": "cited",
    "language": "lang",
    "expected_behaviour": "should",
    "declined": "refused",
    "stratum": "group",
    "expected_values": "expected",
}


def test_it_reads_evidence_and_question_fields_from_the_named_metadata_keys(tmp_path):
    sample = inspect_sample(
        "fs-1",
        question="Quelle était la prévalence de la sous-alimentation dans le district Est en 2024 ?",
        target="Refuser : la série n'existe qu'au niveau national.",
        answer="Les données ne sont disponibles qu'au niveau national (7,6 % en 2024).",
        metadata=EVIDENCE_METADATA,
    )
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    _, lines = converted(path, ImportOptions(columns=EVIDENCE_COLUMNS))
    line = lines[1]
    assert {
        name: line[name] for name in line if name not in ("submitted_at", "received_at", "latency_ms")
    } == {
        "question_id": "fs-1",
        "attempt": 1,
        "language": "fr",
        "question": "Quelle était la prévalence de la sous-alimentation dans le district Est en 2024 ?",
        "reference": "Refuser : la série n'existe qu'au niveau national.",
        "expected_behaviour": "decline",
        "expected_values": [7.6],
        "stratum": "food security",
        "retrieved_ids": ["FS_UNDERNOURISH_PCT", "POP_TOTAL"],
        "retrieved_values": [7.6, 7.9, 21503],
        "retrieved_records": [
            {
                "id": "FS_UNDERNOURISH_PCT",
                "values": [7.6, 7.9],
                "label": "Prevalence of undernourishment",
                "period": "2024",
                "unit": "%",
                "caveats": ["provisional"],
            },
            {"id": "POP_TOTAL", "values": [21503]},
        ],
        "answer": "Les données ne sont disponibles qu'au niveau national (7,6 % en 2024).",
        "cited_ids": ["FS_UNDERNOURISH_PCT", "EDU_STATS_2024"],
        "declined": True,
        "inspect_scores": {
            "match": {
                "value": "C",
                "answer": "Les données ne sont disponibles qu'au niveau national (7,6 % en 2024).",
                "explanation": None,
            }
        },
    }


def test_it_reads_passages_given_as_objects(tmp_path):
    sample = inspect_sample(
        1,
        question="What was inflation in 2024?",
        target="3.1",
        answer="It was 3.1%.",
        metadata={
            "passages": [
                {"id": "CPI_INFL_PCT", "text": "Inflation was 3.1% in 2024."},
                {"content": "It was 4,0 % in 2023."},
            ]
        },
    )
    path = write_inspect_log(tmp_path / "log.json", samples=[sample], layout="json")
    _, lines = converted(path, ImportOptions(language="fr", columns={"retrieved_contexts": "passages"}))
    assert (lines[1]["retrieved_ids"], lines[1]["retrieved_values"], lines[1]["retrieved_contexts"]) == (
        ["CPI_INFL_PCT"],
        [3.1, 4.0],
        ["Inflation was 3.1% in 2024.", "It was 4,0 % in 2023."],
    )
    assert lines[1]["language"] == "fr"


def test_it_names_the_versions_after_the_model_and_the_task_unless_told(tmp_path):
    path = write_inspect_log(
        tmp_path / "log.eval",
        samples=1,
        model="hf/meta-llama/Llama-3.1-8B-Instruct",
        task="inspect_evals/gsm8k",
    )
    shown = inspect_log.preview(path, OPTIONS)
    assert (shown.assistant_version, shown.set_version, shown.set_name) == (
        "hf-meta-llama-Llama-3.1-8B-Instruct",
        "gsm8k-0",
        "gsm8k",
    )
    _, lines = converted(path, ImportOptions(assistant_version="llama-3.1-rag2", set_version="stats-1.0"))
    assert lines[0] == {"assistant_version": "llama-3.1-rag2", "set_version": "stats-1.0"}


@pytest.mark.parametrize(
    ("model", "task", "task_version", "expected"),
    [
        ("openai/gpt-4o", "inspect_evals/gsm8k", 0, ("openai-gpt-4o", "gsm8k-0", "gsm8k")),
        (
            "anthropic/claude-3-5-sonnet@20241022",
            "popularity",
            "v2",
            ("anthropic-claude-3-5-sonnet-20241022", "popularity-v2", "popularity"),
        ),
        (
            "none/none",
            "_private/évaluation régionale",
            1,
            ("none-none", "valuation-r-gionale-1", "valuation r-gionale"),
        ),
        ("m/" + "x" * 120, "t", 0, ("m-" + "x" * 98, "t-0", "t")),
    ],
)
def test_it_makes_labels_of_the_model_and_the_task(model, task, task_version, expected):
    from types import SimpleNamespace

    spec = SimpleNamespace(model=model, task=task, task_version=task_version)
    assert inspect_log.suggested_versions(spec) == expected


def test_it_gives_the_plans_time_limit_as_the_runs_timeout(tmp_path):
    path = write_inspect_log(tmp_path / "log.eval", samples=1, time_limit=90)
    assert converted(path)[1][0] == {
        "assistant_version": "openai-gpt-4o",
        "set_version": "regional_statistics-0",
        "timeout_s": 90,
    }


def test_it_previews_the_first_samples(tmp_path):
    path = write_inspect_log(tmp_path / "log.eval", samples=6)
    shown = inspect_log.preview(path, OPTIONS, rows=2)
    assert (shown.format, shown.samples, shown.fields) == ("inspect", 6, ["series", "contexts"])
    assert shown.columns == {"retrieved_contexts": "contexts"}
    first = statistics_question(0)
    assert shown.rows[0] == {
        "id": 1,
        "epoch": 1,
        "input": first["question"],
        "target": first["target"],
        "completion": first["answer"],
        "metadata": {"series": first["series"], "contexts": first["contexts"]},
        "scores": {"match": {"value": "C", "answer": first["answer"], "explanation": None}},
    }
    assert len(shown.rows) == 2
    assert [line["question_id"] for line in shown.lines] == ["1", "2"]
    assert shown.lines[0]["retrieved_values"] == [first["value"], first["previous"]]
    assert shown.errors == []


def test_it_previews_nested_metadata_as_dotted_fields_and_a_default_turned_off(tmp_path):
    sample = inspect_sample(
        1, question="Q?", target="7.6", answer="7.6", metadata={**EVIDENCE_METADATA, "contexts": ["7.6"]}
    )
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    shown = inspect_log.preview(path, ImportOptions(columns={"retrieved_contexts": "", "stratum": "group"}))
    assert shown.fields == [
        "retrieval.records",
        "retrieval.k",
        "cited",
        "lang",
        "should",
        "refused",
        "group",
        "expected",
        "contexts",
    ]
    assert shown.columns == {"stratum": "group"}
    assert "retrieved_contexts" not in shown.lines[0]


def test_its_readme_examples_are_inspect_logs_of_six_samples():
    results = [converted(EXAMPLES / name) for name in ("inspect_example.eval", "inspect_example.json")]
    assert results[0] == results[1]
    count, lines = results[0]
    assert count == 6
    assert [line.get("status") for line in lines[1:]] == [None, None, None, None, "error", "error"]
    assert lines[6]["status_reason"] == "token limit of 1000 reached"


# -- what is refused -------------------------------------------------------


def test_it_refuses_a_text_file_named_eval(tmp_path):
    path = tmp_path / "log.eval"
    path.write_text("not a log\n")
    assert refusal(path).errors == [
        LineError(
            0,
            None,
            "this is not an Inspect log: a .eval log is a zip archive, and this file is not a zip archive",
            unit="file",
        )
    ]


def test_it_refuses_a_zip_that_is_not_an_inspect_log(tmp_path):
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    message = refusal(path).errors[0].message
    assert message.startswith(
        "this is not an Inspect log: a .eval log is a zip archive holding header.json or _journal/start.json, "
        "and Inspect could not read it (KeyError"
    )


def test_it_refuses_a_json_file_without_an_eval_part(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"version": 2, "samples": []}))
    assert refusal(path).errors == [
        LineError(
            0,
            None,
            'this is not an Inspect log: the JSON object has no "eval" part, which every Inspect log has',
            unit="file",
        )
    ]


def test_it_refuses_a_file_that_is_neither_zip_nor_json(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("[1, 2]\n")
    assert refusal(path).errors[0].message == (
        "this is not an Inspect log: an Inspect log is a .eval zip archive or a .json file holding one JSON object"
    )


VERSION_4 = (
    "this Inspect log is in format version 4, which this import does not know (it reads versions 1, 2 and 3): "
    "convert the log with the Inspect version that wrote it, or ask for this version to be supported"
)

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "inspect"


def test_it_refuses_a_json_log_of_an_unknown_version_and_reads_version_1(tmp_path):
    path = write_inspect_log(tmp_path / "log.json", samples=1, layout="json")
    log = json.loads(path.read_text())
    path.write_text(json.dumps({**log, "version": 4}))
    assert refusal(path).errors == [LineError(0, "version", VERSION_4, unit="file")]
    path.write_text(json.dumps({**log, "version": 1}))
    assert converted(path)[0] == 1


def with_version(written: Path, path: Path, version: int) -> Path:
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(path, "w") as target:
        for name in dict.fromkeys(source.namelist()):
            data = source.read(name)
            if name in ("header.json", "_journal/start.json"):
                data = json.dumps({**json.loads(data), "version": version}).encode()
            target.writestr(name, data)
    return path


def test_it_refuses_an_eval_log_of_an_unknown_version_that_inspect_would_read(tmp_path):
    written = write_inspect_log(tmp_path / "written.eval", samples=1)
    path = with_version(written, tmp_path / "log.eval", 4)
    assert refusal(path).errors == [LineError(0, "version", VERSION_4, unit="file")]


def test_it_reads_a_version_3_eval_log_as_inspect_reads_it():
    # Written by Inspect itself (0.3.195 to 0.3.199 wrote version 3, the
    # transcript's messages pooled), kept in Inspect's own tests.
    from inspect_ai.log import read_eval_log

    path = CORPUS / "inspect_ai-log_message_deduplication.eval"
    with zipfile.ZipFile(path) as archive:
        assert json.loads(archive.read("header.json"))["version"] == 3
    log = read_eval_log(str(path))
    count, lines = converted(path)
    assert count == len(log.samples) == 1
    sample = log.samples[0]
    assert (lines[1]["question_id"], lines[1]["question"], lines[1]["reference"], lines[1]["answer"]) == (
        str(sample.id),
        sample.input,
        sample.target,
        sample.output.completion,
    )
    assert inspect_log.preview(path, OPTIONS).samples == 1


def test_it_says_why_a_version_3_json_log_cannot_be_read_here(tmp_path):
    path = write_inspect_log(tmp_path / "log.json", samples=1, layout="json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "version": 3}))
    assert refusal(path).errors == [
        LineError(
            0,
            "version",
            "this .json log is in format version 3, which the installed Inspect reads only from a .eval "
            "log (Inspect could not read it: ValueError: Unable to read version 3 of log format.): convert "
            "it with the Inspect version that wrote it: inspect log convert LOG.json --to eval --output-dir DIR",
            unit="file",
        )
    ]


def test_it_names_the_chunked_layout_when_the_installed_inspect_cannot_read_it(tmp_path):
    from inspect_ai.log._recorders.chunked import convert_eval_logs_to_chunked

    written = write_inspect_log(tmp_path / "log.eval", samples=2)
    convert_eval_logs_to_chunked(str(written), str(tmp_path / "chunked"))
    chunked = tmp_path / "chunked" / "log.eval"
    stamped = with_version(chunked, tmp_path / "v3.eval", 3)
    for path in (chunked, stamped):
        error = refusal(path).errors
        assert [(error.line, error.field, error.unit) for error in error] == [(0, "samples", "file")]
        assert error[0].message.startswith(
            "this log keeps its samples in Inspect's chunked layout (samples/1_epoch_1/sample.json, "
            "written by inspect log convert-chunked), which the installed Inspect cannot read ("
        )
        with pytest.raises(LogFileError):
            inspect_log.preview(path, OPTIONS)


@pytest.mark.parametrize("layout", ["eval", "journal", "json"])
def test_it_refuses_a_log_without_samples(tmp_path, layout):
    status = "started" if layout == "journal" else "success"
    path = write_inspect_log(tmp_path / log_name(layout), samples=[], layout=layout, status=status)
    message = "the log holds no samples"
    if layout == "journal":
        message += " (its status is 'started': no sample ended before the run stopped)"
    assert refusal(path).errors == [LineError(0, "samples", message, unit="file")]


def test_it_refuses_a_json_log_too_large_to_read_whole(tmp_path, monkeypatch):
    path = write_inspect_log(tmp_path / "log.json", samples=1, layout="json")
    monkeypatch.setattr(inspect_log, "JSON_MAX_BYTES", 1024 * 1024)
    path.write_bytes(path.read_bytes() + b" " * 2 * 1024 * 1024)
    assert refusal(path).errors[0].message == (
        "this .json log is 2 MB: Inspect reads a .json log whole, so one over 1 MB is refused; convert it to a "
        ".eval log, which is read sample by sample: inspect log convert LOG.json --to eval --output-dir DIR"
    )


def test_it_names_each_sample_without_the_mapped_key_and_keeps_counting_past_max_errors(tmp_path):
    samples = [
        inspect_sample(index, question="Q?", target="1", answer="1", contexts=["1"] if index == 1 else None)
        for index in range(1, 5)
    ]
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    error = refusal(path, ImportOptions(columns={"retrieved_contexts": "contexts"}), max_errors=2)
    assert error.total == 3
    assert error.errors == [
        LineError(
            2,
            "metadata.contexts",
            "missing: the sample has no metadata key 'contexts' (mapped to retrieved_contexts) (sample id 2, epoch 1)",
            unit="sample",
        ),
        LineError(
            3,
            "metadata.contexts",
            "missing: the sample has no metadata key 'contexts' (mapped to retrieved_contexts) (sample id 3, epoch 1)",
            unit="sample",
        ),
    ]
    assert str(error.errors[0]).startswith("sample 2, field metadata.contexts: missing")


def test_it_refuses_records_whose_values_are_not_numbers(tmp_path):
    sample = inspect_sample(
        "r1",
        question="Q?",
        target="1.5",
        answer="1.5",
        metadata={"records": [{"id": "X_SERIES", "values": [1.5, "n/a"]}]},
    )
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    assert refusal(path, ImportOptions(columns={"retrieved_records": "records"})).errors == [
        LineError(
            1,
            "metadata.records[0].values[1]",
            "is \"n/a\", not a number: a record's values are numbers (sample id 'r1', epoch 1)",
            unit="sample",
        )
    ]


def test_it_names_the_metadata_key_behind_a_field_the_run_log_refuses(tmp_path):
    sample = inspect_sample(
        1, question="Q?", target="1", answer="1", metadata={"lang": "English", "refused": "no"}
    )
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    errors = refusal(path, ImportOptions(columns={"language": "lang", "declined": "refused"})).errors
    assert [(error.line, error.field, error.message) for error in errors] == [
        (1, "metadata.refused", 'declined must be true or false, not "no" (sample id 1, epoch 1)'),
        (
            1,
            "metadata.lang",
            'as language, "English" is not a language code such as en, fr or pt-BR (at most 20 characters) '
            "(sample id 1, epoch 1)",
        ),
    ]


def test_it_refuses_text_holding_nul(tmp_path):
    sample = inspect_sample(1, question="Q?", target="1", answer="It was 1.\x00")
    path = write_inspect_log(tmp_path / "log.eval", samples=[sample])
    assert refusal(path).errors == [
        LineError(
            1,
            "output.completion",
            "holds the NUL character (\\u0000), which cannot be stored: remove it (sample id 1, epoch 1)",
            unit="sample",
        )
    ]


def test_it_lets_a_failed_sample_lack_the_evidence_key(tmp_path):
    samples = [
        inspect_sample(1, question="Q?", target="1", answer="1", contexts=["1"], metadata={"cited": ["X_1"]}),
        inspect_sample(2, question="Q?", target="1", answer="", error="RuntimeError: retrieval failed"),
    ]
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    _, lines = converted(
        path, ImportOptions(columns={"retrieved_contexts": "contexts", "cited_ids": "cited"})
    )
    assert (lines[2]["status"], lines[2]["retrieved_values"], "cited_ids" in lines[2]) == ("error", [], False)


def test_it_refuses_a_sample_and_epoch_given_twice(tmp_path):
    samples = [
        inspect_sample(5, question="Q?", target="1", answer="1"),
        inspect_sample(5, question="Q again?", target="1", answer="1"),
        inspect_sample(1, question="Q?", target="1", answer="1"),
        inspect_sample("1", question="Q?", target="1", answer="1"),
    ]
    path = write_inspect_log(tmp_path / "log.json", samples=samples, layout="json")
    assert [(error.line, error.field, error.message) for error in refusal(path).errors] == [
        (3, "id", "question '5' epoch 1 is already sample 2: a log gives each sample's epoch once"),
        (4, "id", "question '1' epoch 1 is already sample 1: a log gives each sample's epoch once"),
    ]


def test_it_refuses_a_gap_in_a_questions_epochs(tmp_path):
    samples = [
        inspect_sample(1, question="Q?", target="1", answer="1", epoch=1),
        inspect_sample(2, question="Q?", target="1", answer="1", epoch=2),
        inspect_sample(1, question="Q?", target="1", answer="1", epoch=2),
    ]
    # A finished run that logged these alone (an interrupted one's gap is
    # an attempt not run).
    path = write_inspect_log(tmp_path / "log.eval", samples=samples, epochs=2, logged_samples=3)
    assert [(error.line, error.field) for error in refusal(path).errors] == [(3, "epoch")]
    assert refusal(path).errors[0].message == (
        "question '2' has epoch 2 but not epoch 1: a run log numbers a question's attempts from 1 without gaps, "
        "so the log must hold every earlier epoch"
    )


def test_it_refuses_options_it_cannot_use(four):
    options = ImportOptions(language="English", assistant_version="my model", columns={"answer": "text"})
    assert [(error.field, error.unit) for error in refusal(four["eval"], options).errors] == [
        ("columns", "file"),
        ("assistant_version", "file"),
        ("language", "file"),
    ]


def test_a_large_log_is_converted_in_shares_by_several_processes_to_the_same_bytes(tmp_path, monkeypatch):
    samples = [
        inspect_sample(index, question=f"Q{index}?", target="7.6", answer=f"About 7.6% ({index}).")
        for index in range(1, 41)
    ]
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    alone = io.BytesIO()
    inspect_log.convert(path, alone, OPTIONS)
    monkeypatch.setattr(inspect_log, "PARALLEL_FROM", 2)
    monkeypatch.setattr(inspect_log.os, "cpu_count", lambda: 3)
    shared = io.BytesIO()
    assert inspect_log.convert(path, shared, OPTIONS) == 40
    assert shared.getvalue() == alone.getvalue()


def test_shares_name_bad_samples_by_their_place_in_the_whole_log(tmp_path, monkeypatch):
    samples = [
        inspect_sample(
            index,
            question=f"Q{index}?",
            target="7.6",
            answer=f"About 7.6% ({index}).",
            metadata={"lang": "en"},
        )
        for index in range(1, 21)
    ]
    samples[17] = inspect_sample(18, question="Q18?", target="7.6", answer="x", metadata={"lang": "english!"})
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    monkeypatch.setattr(inspect_log, "PARALLEL_FROM", 2)
    monkeypatch.setattr(inspect_log.os, "cpu_count", lambda: 2)
    options = ImportOptions(columns={"language": "lang"})
    errors = refusal(path, options).errors
    assert [(error.line, error.field, error.unit) for error in errors] == [(18, "metadata.lang", "sample")]


def test_a_mapped_value_that_is_not_finite_is_named_on_its_sample(tmp_path):
    samples = [
        inspect_sample(1, question="Q?", target="5", answer="5", metadata={"values": [5.0]}),
        inspect_sample(2, question="Q?", target="5", answer="5", metadata={"values": [float("nan"), 5.0]}),
    ]
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    errors = refusal(path, ImportOptions(columns={"retrieved_values": "values"})).errors
    assert [(error.line, error.field) for error in errors] == [(2, "metadata.values[0]")]
    assert "finite number" in errors[0].message


def test_a_key_taken_by_default_may_be_absent_from_later_samples_and_a_named_one_may_not(tmp_path):
    samples = [
        inspect_sample(index, question="Q?", target="5", answer="5", contexts=["It was 5."])
        for index in range(1, 8)
    ]
    samples[6] = inspect_sample(7, question="Q?", target="5", answer="5")
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    count, lines = converted(path, ImportOptions())
    assert count == 7
    assert lines[1]["retrieved_contexts"] == ["It was 5."]
    assert "retrieved_contexts" not in lines[7]
    errors = refusal(path, ImportOptions(columns={"retrieved_contexts": "contexts"})).errors
    assert [(error.line, error.field) for error in errors] == [(7, "metadata.contexts")]
    # "field=" turns a default off.
    _, lines = converted(path, ImportOptions(columns={"retrieved_contexts": ""}))
    assert all("retrieved_contexts" not in line for line in lines[1:])


def test_a_log_is_converted_in_one_process_where_children_are_not_allowed(tmp_path, monkeypatch):
    samples = [inspect_sample(index, question="Q?", target="1", answer="1") for index in range(1, 11)]
    path = write_inspect_log(tmp_path / "log.eval", samples=samples)
    monkeypatch.setattr(inspect_log, "PARALLEL_FROM", 2)
    monkeypatch.setattr(inspect_log.os, "cpu_count", lambda: 2)
    # A daemonic process (a Celery pool's worker) may not start children.
    monkeypatch.setattr(inspect_log.multiprocessing.current_process(), "daemon", True)
    started = []
    monkeypatch.setattr(inspect_log, "_convert_parallel", lambda *args: started.append(args))
    assert converted(path, OPTIONS)[0] == 10
    assert started == []


# -- multiple choice -------------------------------------------------------


def capital_samples():
    """Multiple-choice samples as Inspect's multiple_choice datasets record
    them: the stem as input, the options in choices, the target a letter
    (or letters, when several options are right)."""
    return [
        inspect_sample(
            "mc1",
            question="What is the capital of France?",
            # GPQA's options keep a line break at the end of some.
            choices=["Lyon", "Paris", "Nice\n"],
            target="B",
            answer="ANSWER: B",
            scores={"choice": ("C", "B", None)},
        ),
        inspect_sample(
            "mc2",
            question="Which of these cities had more than 1000000 inhabitants in 2020?",
            choices=["Marseille (870000)", "Paris (2100000)", "Lyon (520000)", "Berlin (3600000)"],
            target=["B", "D"],
            answer="ANSWER: B,D",
            scores={"choice": ("C", "B, D", None)},
            chat=True,
        ),
    ]


@pytest.mark.parametrize("layout", ["eval", "json"])
def test_it_puts_multiple_choice_options_in_the_question_and_names_the_right_one(tmp_path, layout):
    from inspect_ai.log import read_eval_log

    path = write_inspect_log(tmp_path / log_name(layout), samples=capital_samples(), layout=layout)
    stored = read_eval_log(str(path)).samples
    assert [(sample.choices, sample.target) for sample in stored] == [
        (["Lyon", "Paris", "Nice\n"], "B"),
        (["Marseille (870000)", "Paris (2100000)", "Lyon (520000)", "Berlin (3600000)"], ["B", "D"]),
    ]
    _, lines = converted(path)
    assert [(line["question"], line["reference"], line["expected_values"]) for line in lines[1:]] == [
        ("What is the capital of France?\nA. Lyon\nB. Paris\nC. Nice", "B. Paris", []),
        (
            "Which of these cities had more than 1000000 inhabitants in 2020?\n"
            "A. Marseille (870000)\nB. Paris (2100000)\nC. Lyon (520000)\nD. Berlin (3600000)",
            "B. Paris (2100000) | D. Berlin (3600000)",
            [],
        ),
    ]
    shown = inspect_log.preview(path, OPTIONS)
    assert shown.rows[0]["choices"] == ["Lyon", "Paris", "Nice\n"]
    assert shown.lines[0]["reference"] == "B. Paris"


def test_a_multiple_choice_target_that_is_no_options_letter_is_kept_as_written(tmp_path):
    sample = inspect_sample(
        "mc3", question="Pick the larger number.", choices=["12", "30"], target="30", answer="30"
    )
    _, lines = converted(write_inspect_log(tmp_path / "log.eval", samples=[sample]))
    assert (lines[1]["question"], lines[1]["reference"], lines[1]["expected_values"]) == (
        "Pick the larger number.\nA. 12\nB. 30",
        "30",
        [],
    )


# -- preview and convert agree ---------------------------------------------


def preview_and_convert_errors(path: Path) -> tuple[list[LineError], list[LineError]]:
    return inspect_log.preview(path, OPTIONS).errors, refusal(path).errors


def test_its_preview_names_the_gap_in_epochs_that_convert_refuses(tmp_path):
    # Inspect's own log_tool_call_error: a finished log whose one sample is epoch 4.
    public = CORPUS / "inspect_ai-log_tool_call_error.json"
    written = write_inspect_log(
        tmp_path / "log.eval",
        samples=[
            inspect_sample(1, question="Q?", target="1", answer="1", epoch=1),
            inspect_sample(2, question="Q?", target="1", answer="1", epoch=2),
        ],
        epochs=2,
        sample_ids=[1, 2],
        logged_samples=2,
    )
    for path, message in (
        (public, "question '1' has epoch 4 but not epoch 1, 2, 3"),
        (written, "question '2' has epoch 2 but not epoch 1"),
    ):
        shown, refused = preview_and_convert_errors(path)
        assert shown == refused
        assert refused[-1].field == "epoch"
        assert refused[-1].message.startswith(message)


def test_its_preview_names_a_sample_given_twice_as_convert_does(tmp_path):
    samples = [
        inspect_sample(5, question="Q?", target="1", answer="1"),
        inspect_sample(5, question="Q again?", target="1", answer="1"),
    ]
    path = write_inspect_log(tmp_path / "log.json", samples=samples, layout="json")
    shown, refused = preview_and_convert_errors(path)
    assert (
        shown
        == refused
        == [
            LineError(
                2,
                "id",
                "question '5' epoch 1 is already sample 1: a log gives each sample's epoch once",
                unit="sample",
            )
        ]
    )


def test_its_preview_refuses_more_epochs_than_a_run_log_holds(tmp_path, monkeypatch):
    path = write_inspect_log(tmp_path / "log.eval", samples=1, epochs=3)
    monkeypatch.setattr(inspect_log, "MAX_REPETITIONS", 2)
    with pytest.raises(LogFileError) as caught:
        inspect_log.preview(path, OPTIONS)
    assert caught.value.errors == refusal(path).errors


def test_the_command_says_what_an_incomplete_log_holds_of_its_plan(tmp_path, capsys):
    from scoring.imports.__main__ import main as import_main

    path = write_inspect_log(
        tmp_path / "log.eval",
        samples=statistics_samples(3),
        sample_ids=[1, 2, 3, 4],
        layout="journal",
        status="started",
    )
    note = (
        "the log's status is started: 3 of the 4 planned samples are present (4 samples x 1 epoch); "
        "the 1 not run are imported as cancelled attempts, counted in N"
    )
    assert import_main([str(path), "--preview"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == note
    out = tmp_path / "run.jsonl"
    assert import_main([str(path), "--out", str(out)]) == 0
    # The answers the log holds, apart from the attempts it never ran.
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: 3 answers and 1 attempt not run written to {out} (inspect)",
        f"{path}: {note}",
    ]


def test_public_mmlu_and_gpqa_logs_keep_their_options():
    # Logs inspect_flow keeps in its tests, written by inspect_evals' mmlu_0_shot and gpqa_diamond.
    from inspect_ai.log import read_eval_log

    mmlu = CORPUS / "inspect_flow-mmlu-0-shot.eval"
    sample = read_eval_log(str(mmlu)).samples[0]
    assert (sample.choices, sample.target) == (["6.0 e", "6.8 eV", "12.2 eV", "13.6 eV"], "A")
    _, lines = converted(mmlu)
    assert lines[1]["question"] == sample.input + "\nA. 6.0 e\nB. 6.8 eV\nC. 12.2 eV\nD. 13.6 eV"
    assert (lines[1]["reference"], lines[1]["expected_values"]) == ("A. 6.0 e", [])

    gpqa = CORPUS / "inspect_flow-gpqa-diamond.eval"
    log = read_eval_log(str(gpqa))
    count, lines = converted(gpqa)
    assert count == len(log.samples) == 4
    assert lines[0]["repetitions"] == log.eval.config.epochs == 4
    assert [(line["attempt"], line["reference"]) for line in lines[1:]] == [
        (sample.epoch, "B. 10^-4 eV") for sample in log.samples
    ]
    assert lines[1]["question"].endswith("\nA. 10^-11 eV\nB. 10^-4 eV\nC. 10^-8 eV\nD. 10^-9 eV")


def test_a_chunked_log_is_read_through_inspects_public_reader_when_it_reads_that_layout(
    tmp_path, monkeypatch
):
    import inspect_ai.log
    from inspect_ai.log._recorders.chunked import convert_eval_logs_to_chunked

    written = write_inspect_log(tmp_path / "log.eval", samples=2)
    convert_eval_logs_to_chunked(str(written), str(tmp_path / "chunked"))
    chunked = tmp_path / "chunked" / "log.eval"
    # An Inspect that reads the chunked layout, as the one installed here
    # reads the log it was converted from.
    public_sample, public_by_id = (
        inspect_ai.log.read_eval_log_sample,
        inspect_ai.log.read_eval_log_samples_by_id,
    )
    monkeypatch.setattr(
        inspect_ai.log,
        "read_eval_log_sample",
        lambda path, *args, **kwargs: public_sample(str(written), *args, **kwargs),
    )
    monkeypatch.setattr(
        inspect_ai.log,
        "read_eval_log_samples_by_id",
        lambda path, *args, **kwargs: public_by_id(str(written), *args, **kwargs),
    )
    monkeypatch.setattr(inspect_log, "PARALLEL_FROM", 1)
    assert converted(chunked) == converted(written)


def test_a_logs_note_reads_a_finished_logs_header_alone(four, tmp_path, read_whole):
    assert inspect_log.log_note(four["json"]) == ""
    assert read_whole == []
    interrupted = write_inspect_log(
        tmp_path / "log.json",
        samples=list(statistics_samples(1)),
        sample_ids=[1, 2],
        status="cancelled",
        layout="json",
    )
    assert inspect_log.log_note(interrupted) == inspect_log.preview(interrupted, OPTIONS).note
    assert inspect_log.log_note(interrupted).startswith("the log's status is cancelled: 1 of the 2 planned")
