"""python -m scoring.judge end to end: a run and its set, judged through the real OpenAI SDK
against a local server (tests/provider_servers.py), with a cost estimate before any call."""

import json
import os
import subprocess
import sys
import tomllib

import pytest

from scoring.judge.__main__ import main
from scoring.judge.evaluate import AnswerEvaluation, evidence_texts
from tests.provider_servers import ProviderServer, openai_completion

SET_LINES = [
    {"set_version": "qa-1"},
    {
        "question_id": "q1",
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [7.6],
        "question": "What share of the population was undernourished in 2024?",
        "reference": "7.6 % of the population was undernourished in 2024.",
    },
    {
        "question_id": "q2",
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [72.4],
        "question": "What was life expectancy at birth in 2022?",
    },
]
RUN_LINES = [
    {"assistant_version": "a-1", "set_version": "qa-1"},
    {
        "question_id": "q1",
        "language": "en",
        "retrieved_ids": ["FS_UNDERNOURISH_PCT"],
        "retrieved_values": [7.6, 7.9],
        "answer": "About 7.6% in 2024.",
        "cited_ids": ["FS_UNDERNOURISH_PCT"],
        "declined": False,
    },
    {
        "question_id": "q2",
        "language": "en",
        "retrieved_ids": ["HLTH_LIFE_EXP"],
        "retrieved_values": [72.4],
        "answer": "72.4 years.",
        "cited_ids": [],
        "declined": False,
    },
]


def write_lines(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge-cli")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return write_lines(tmp_path / "run.jsonl", RUN_LINES), write_lines(tmp_path / "set.jsonl", SET_LINES)


def claims(*supported):
    return openai_completion(
        json.dumps({"claims": [{"claim": f"c{i}", "supported": s} for i, s in enumerate(supported)]})
    )


def test_it_judges_a_run_and_prints_the_cost_first(files, capsys, tmp_path):
    run, questions = files
    with ProviderServer([claims(True, False), claims(True)]) as server:
        code = main(
            [
                str(run),
                "--questions",
                str(questions),
                "--judge",
                f"openai:judge-model@{server.url}/v1",
                "--metrics",
                "faithfulness",
                "--yes",
                "--json",
                "--retries",
                "0",
                "--out",
                str(tmp_path / "r.jsonl"),
            ]
        )
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err.startswith("Judging 2 answers with 1 judge(s) on faithfulness: 2 calls, about ")
    summary = json.loads(captured.out)
    assert summary["metrics"] == {"faithfulness/openai:judge-model": 0.75, "faithfulness": 0.75}
    assert summary["usage"]["openai:judge-model"]["responses"] == 2
    assert summary["usage"]["openai:judge-model"]["prompt_tokens"] == 22
    assert "sk-test-judge-cli" not in captured.out + (tmp_path / "r.jsonl").read_text()
    first = server.requests[0].body
    assert first["model"] == "judge-model"
    assert first["max_completion_tokens"] == 1024
    assert "Retrieved records: FS_UNDERNOURISH_PCT. Values: 7.6, 7.9." in first["messages"][1]["content"]
    rows = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(rows[1])["verdicts"]["faithfulness/openai:judge-model"]["details"] == {
        "n_claims": 2,
        "n_supported": 1,
    }


def test_it_writes_the_report_as_toml_for_a_toml_path(files, capsys, tmp_path):
    run, questions = files
    out = tmp_path / "r.toml"
    with ProviderServer([claims(True, False), claims(True)]) as server:
        code = main(
            [
                *(str(run), "--questions", str(questions), "--judge", f"openai:judge-model@{server.url}/v1"),
                *("--metrics", "faithfulness", "--yes", "--json", "--retries", "0", "--out", str(out)),
            ]
        )
    assert code == 0
    written = tomllib.loads(out.read_text())
    assert [row["faithfulness/openai:judge-model"] for row in written["rows"]] == [0.5, 1.0]
    assert AnswerEvaluation.read(out).metrics == json.loads(capsys.readouterr().out)["metrics"]


def test_it_sends_the_reference_only_where_the_set_has_one(files, capsys):
    run, questions = files
    verdict = json.dumps({"true_positives": ["a"], "false_positives": [], "false_negatives": []})
    with ProviderServer([openai_completion(verdict)]) as server:
        code = main(
            [
                str(run),
                "--questions",
                str(questions),
                "--judge",
                f"openai:m@{server.url}/v1",
                "--metrics",
                "answer_correctness",
                "--yes",
                "--retries",
                "0",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0
    assert len(server.requests) == 1
    assert "answer_correctness/openai:m" in out and "1/2" in out


def test_it_counts_and_lists_a_malformed_verdict_and_exits_1(files, capsys):
    run, questions = files
    with ProviderServer([claims(True), openai_completion("Looks supported to me.")]) as server:
        code = main(
            [
                str(run),
                "--questions",
                str(questions),
                "--judge",
                f"openai:m@{server.url}/v1",
                "--metrics",
                "faithfulness",
                "--yes",
                "--retries",
                "0",
            ]
        )
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "failed: q2 faithfulness/openai:m: the verdict is not a JSON object (nothing is read from prose)"
        in out
    )


def test_it_refuses_to_start_without_yes_when_it_cannot_ask(files):
    run, questions = files
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring.judge",
            str(run),
            "--questions",
            str(questions),
            "--judge",
            "openai:m@http://127.0.0.1:9/v1",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, OPENAI_API_KEY="x"),
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "error: not started: pass --yes to judge without being asked"


def test_it_says_in_one_sentence_when_the_judge_cannot_be_reached(files, capsys):
    run, questions = files
    code = main(
        [
            str(run),
            "--questions",
            str(questions),
            "--judge",
            "openai:m@http://127.0.0.1:9/v1",
            "--metrics",
            "answer_relevance",
            "--yes",
            "--retries",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "failed: q1 answer_relevance/openai:m: openai could not be reached at http://127.0.0.1:9/v1" in out


def test_it_names_a_missing_key(files, capsys, monkeypatch):
    run, questions = files
    monkeypatch.delenv("OPENAI_API_KEY")
    code = main([str(run), "--questions", str(questions), "--judge", "openai:m", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert "OPENAI_API_KEY" in err.splitlines()[-1]


def test_it_refuses_a_question_without_text(files, capsys):
    run, questions = files
    lines = [dict(line) for line in SET_LINES]
    del lines[2]["question"]
    write_lines(questions, lines)
    code = main([str(run), "--questions", str(questions), "--judge", "openai:m", "--yes"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "error: line 3: question q2 has no text in the set"


def test_it_reads_evidence_texts_when_the_log_has_them():
    assert evidence_texts({"retrieved_contexts": ["a", "b"], "retrieved_ids": ["X"]}) == ["a", "b"]
    assert evidence_texts({"retrieved_ids": [], "retrieved_values": []}) == []
    assert evidence_texts({"retrieved_ids": ["X"], "retrieved_values": [1.0, 2]}) == [
        "Retrieved records: X. Values: 1, 2."
    ]


def test_it_reads_retrieved_records_as_one_text_each():
    record = {
        "retrieved_ids": ["GDP_PC_USD"],
        "retrieved_records": [
            {
                "id": "GDP_PC_USD",
                "label": "GDP per capita",
                "values": [12774.0],
                "period": "2014",
                "unit": "US$",
                "caveats": ["provisional"],
            }
        ],
    }
    assert evidence_texts(record) == [
        "GDP per capita (GDP_PC_USD): period 2014; unit US$; values 12774; caveats: provisional."
    ]
