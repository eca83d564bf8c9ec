"""python -m scoring.imports, end to end."""

import json
import os
import stat
import subprocess
import sys

import orjson
import pytest

from scoring import qa
from scoring.imports import parse_mapping
from scoring.imports.__main__ import main
from scoring.logfile import read_answers, validate_questions
from tests.conftest import SHARED_DATA

EXAMPLES = SHARED_DATA / "imports"
CSV_EXAMPLE = EXAMPLES / "answers_example.csv"
RAGAS_EXAMPLE = EXAMPLES / "ragas_example.jsonl"
CSV_COLUMNS = (
    "question_id=ID,language=Lang,question=Question,retrieved_contexts=Sources,retrieved_ids=Source IDs,"
    "answer=Bot answer,cited_ids=Cited,declined=Declined,reference=Gold answer,expected_behaviour=Expected"
)
VERSIONS = ["--assistant-version", "bot-2.0", "--set-version", "stats-1"]


def test_it_converts_a_csv_that_python_m_scoring_then_scores(tmp_path):
    out = tmp_path / "run.jsonl"
    converted = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring.imports",
            str(CSV_EXAMPLE),
            "--columns",
            CSV_COLUMNS,
            *VERSIONS,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert (converted.returncode, converted.stdout) == (0, "")
    assert converted.stderr == f"{CSV_EXAMPLE}: 5 answers written to {out} (csv)\n"
    scored = subprocess.run(
        [sys.executable, "-m", "scoring", str(out), "--json"], capture_output=True, text=True, check=True
    )
    result = json.loads(scored.stdout)
    assert result["answers"] == 5
    assert {measure: (c["k"], c["n"]) for measure, c in result["slices"]["all"].items()} == {
        "numeric_accuracy": (3, 4),
        "citation_validity": (4, 5),
        "refusal_accuracy": (1, 1),
        "answer_rate": (4, 4),
        "unsupported_numbers": (1, 4),
        "unsupported_answers": (1, 4),
    }
    assert {measure: (c["k"], c["n"]) for measure, c in result["slices"]["language=fr"].items()}[
        "numeric_accuracy"
    ] == (1, 1)


def test_it_writes_to_standard_output_without_out(tmp_path, capsysbinary):
    assert main([str(RAGAS_EXAMPLE), *VERSIONS]) == 0
    written = capsysbinary.readouterr().out
    lines = [orjson.loads(line) for line in written.splitlines()]
    assert lines[0] == {"assistant_version": "bot-2.0", "set_version": "stats-1"}
    assert [line["question_id"] for line in lines[1:]] == ["row-1", "row-2", "row-3", "row-4", "row-5"]
    out = tmp_path / "run.jsonl"
    assert main([str(RAGAS_EXAMPLE), *VERSIONS, "--format", "ragas", "--out", str(out)]) == 0
    assert out.read_bytes() == written
    assert len(list(read_answers(out))) == 5


def test_it_writes_an_ordinary_file(tmp_path):
    out = tmp_path / "run.jsonl"
    assert main([str(RAGAS_EXAMPLE), *VERSIONS, "--out", str(out)]) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert [path.name for path in tmp_path.iterdir()] == ["run.jsonl"]


def test_it_previews_the_mapping_and_the_first_rows_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    assert (
        main([str(CSV_EXAMPLE), "--columns", CSV_COLUMNS, "--preview", "--rows", "2", "--out", str(out)]) == 0
    )
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{CSV_EXAMPLE}: CSV with any column names"
    assert printed[1] == (
        "fields in the file: ID, Lang, Question, Sources, Source IDs, Bot answer, Cited, Declined, Gold answer, Expected"
    )
    assert "  answer             <- Bot answer" in printed
    assert "  retrieved_values   = the numbers in the retrieved contexts, years left out" in printed
    assert (
        "  expected_values    = the reference's number, when it is a number, a number with its unit or a "
        "short phrase around one number (a year that is the answer counts, the question's numbers are left "
        "out); none for a question to decline"
    ) in printed
    assert "  stratum            = none" in printed
    assert printed[-4] == "the first 2 rows as run-log lines:"
    assert [orjson.loads(line)["question_id"] for line in printed[-3:-1]] == ["q01", "q02"]
    assert printed[-1] == "the whole file, checked as converting it checks: 5 answers, no problems"
    assert not out.exists()


def test_it_previews_the_problems_of_the_first_rows_with_status_2(tmp_path, capsys):
    source = tmp_path / "a.jsonl"
    source.write_text('{"user_input": "Q", "response": "A"}\n{"user_input": "Q2", "response": ""}\n')
    assert main([str(source), "--preview"]) == 2
    captured = capsys.readouterr()
    assert '  question_id        = the row\'s position: "row-1", "row-2", ...' in captured.out
    assert "  language           = en, the language option" in captured.out
    assert "the first 2 rows as run-log lines, 1 with problems (below):" in captured.out
    assert captured.err == f"{source}: line 2, field response: empty: every row needs an answer\n"


def test_its_preview_checks_the_whole_file_as_conversion_does(tmp_path, capsys):
    # An id given twice on line 8, past the rows shown: convert refuses it,
    # so the preview says so and exits 2.
    source = tmp_path / "late.csv"
    rows = [f"{number},q{number},a{number},{number}" for number in range(1, 7)]
    source.write_text("\n".join(["id,question,response,reference", *rows, "6,q7,a7,7"]) + "\n")
    assert main([str(source), "--preview"]) == 2
    captured = capsys.readouterr()
    printed = captured.out.splitlines()
    assert printed[-7] == "the first 5 rows as run-log lines:"
    assert printed[-1] == "the whole file, checked as converting it checks: refused, 1 problem (below)"
    assert captured.err == f"{source}: line 8, field id: '6' is already the question id on line 7\n"
    # The versions are not the file's to name: the preview leaves them to
    # the conversion, as it did.
    source.write_text("\n".join(["id,question,response,reference", *rows]) + "\n")
    assert main([str(source), "--preview"]) == 0
    captured = capsys.readouterr()
    assert (
        captured.out.splitlines()[-1]
        == "the whole file, checked as converting it checks: 6 answers, no problems"
    )
    assert captured.err == ""


def test_its_preview_of_an_inspect_log_checks_every_sample(tmp_path, capsys):
    pytest.importorskip("inspect_ai")
    from tests.inspect_logs import statistics_samples, write_inspect_log

    samples = list(statistics_samples(8))
    samples[7] = samples[7].model_copy(update={"metadata": {}})
    path = write_inspect_log(tmp_path / "late.eval", samples=samples)
    assert main([str(path), "--columns", "stratum=series", "--preview"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == (
        "the whole file, checked as converting it checks: refused, 1 problem (below)"
    )
    assert captured.err == (
        f"{path}: sample 8, field metadata.series: missing: the sample has no metadata key 'series' "
        "(mapped to stratum) (sample id 8, epoch 1)\n"
    )
    # The problems of the rows shown are said once.
    assert main([str(path), "--columns", "stratum=series", "--preview", "--rows", "8"]) == 2
    assert capsys.readouterr().err.count("sample 8,") == 1


def test_it_prints_each_problem_on_its_line_and_leaves_an_existing_out_as_it_was(tmp_path, capsys):
    source = tmp_path / "answers.csv"
    source.write_text("Question,Bot answer,Lang\nQ1,,en\nQ2,Fine,xx-!\n")
    out = tmp_path / "run.jsonl"
    out.write_text("the previous run\n")
    code = main(
        [str(source), "--columns", "question=Question,answer=Bot answer,language=Lang", "--out", str(out)]
    )
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{source}: line 1, field assistant_version: missing: a Ragas or CSV file does not name versions; "
        "give the assistant version the answers are imported under",
        f"{source}: line 1, field set_version: missing: a Ragas or CSV file does not name versions; "
        "give the set version the answers are imported under",
        f"{source}: line 2, field Bot answer: empty: every row needs an answer",
        f'{source}: line 3, field Lang: "xx-!" is not a language code such as en, fr or pt-BR '
        "(at most 20 characters)",
    ]
    assert out.read_text() == "the previous run\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["answers.csv", "run.jsonl"]


def test_it_prints_nothing_on_standard_output_when_a_conversion_fails(tmp_path, capsys):
    source = tmp_path / "a.jsonl"
    source.write_text('{"user_input": "Q", "response": "A"}\n' * 3 + '{"user_input": "Q"}\n')
    assert main([str(source), *VERSIONS]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        captured.err
        == f'{source}: line 4, field answer: missing: no "answer" or "response" on this line; map the answer field to the key that holds it\n'
    )


def test_it_lists_the_first_200_problems_and_counts_the_rest(tmp_path, capsys):
    source = tmp_path / "a.jsonl"
    source.write_text('{"user_input": "Q", "response": ""}\n' * 250)
    assert main([str(source), *VERSIONS]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 201
    assert errors[-1] == f"{source}: … and 50 more"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--columns", "answers=x"], '--columns: "answers" is not a field of the run log; the fields are '),
        (["--columns", "answer"], '--columns: "answer" is not field=column'),
        (["--columns", "answer=a", "--columns", "answer=b"], '--columns: the field "answer" is given twice'),
        (["--language", "english!"], '--language: "english!" is not a language code such as en, fr or pt-BR'),
    ],
)
def test_it_refuses_bad_options_with_status_2(capsys, arguments, message):
    assert main([str(RAGAS_EXAMPLE), *VERSIONS, *arguments]) == 2
    assert capsys.readouterr().err.startswith(message)


def test_it_reads_a_column_name_that_holds_a_comma():
    assert parse_mapping(["question=Question, as asked,answer=Answer", "language = Lang"]) == {
        "question": "Question, as asked",
        "answer": "Answer",
        "language": "Lang",
    }


def test_it_says_when_the_file_needs_no_import_or_its_format_cannot_be_told(tmp_path, capsys):
    run_log = SHARED_DATA / "running_example.jsonl"
    assert main([str(run_log)]) == 2
    assert capsys.readouterr().err == (
        f"{run_log}: this file is already a run log in this app's own format: it needs no import "
        f"(score a run log with python -m scoring {run_log})\n"
    )
    words = tmp_path / "notes.txt"
    words.write_text("just words\n")
    assert main([str(words)]) == 2
    assert capsys.readouterr().err == (
        f"{words}: the format cannot be told from the file; give --format inspect, ragas, lm-eval or csv\n"
    )
    assert main([str(tmp_path / "absent.csv")]) == 2
    assert capsys.readouterr().err == f"{tmp_path / 'absent.csv'}: no such file\n"
    assert main([str(CSV_EXAMPLE), "--out", str(tmp_path / "no" / "run.jsonl"), *VERSIONS]) == 2
    assert (
        capsys.readouterr().err == f"{tmp_path / 'no' / 'run.jsonl'}: no such directory {tmp_path / 'no'}\n"
    )


def test_it_refuses_a_file_that_is_not_the_format_given(capsys):
    assert main([str(CSV_EXAMPLE), "--format", "ragas", *VERSIONS]) == 2
    assert capsys.readouterr().err == (
        f"{CSV_EXAMPLE}: this file looks like CSV (its first line is a header: 'ID', 'Lang', 'Question', "
        "'Sources', 'Source IDs', 'Bot answer', ...), not Ragas-style JSON Lines; import it as csv\n"
    )


def test_it_writes_qa_datasets_as_question_sets(tmp_path, capsys):
    open_set = tmp_path / "open.jsonl"
    arguments = ["qa", "open", str(EXAMPLES / "qa_open_example.csv"), "--out", str(open_set)]
    arguments += ["--columns", "id=qid,question=Question,reference=Reference answer,stratum=Topic"]
    assert main(arguments) == 0
    assert validate_questions(open_set) == 4
    mc_set = tmp_path / "mc.jsonl"
    assert (
        main(
            [
                "qa",
                "mc",
                str(EXAMPLES / "qa_mc_example.jsonl"),
                "--columns",
                "stratum=topic",
                "--out",
                str(mc_set),
            ]
        )
        == 0
    )
    assert capsys.readouterr().err.splitlines() == [
        f"{EXAMPLES / 'qa_open_example.csv'}: 4 questions written to {open_set}",
        f"{EXAMPLES / 'qa_mc_example.jsonl'}: 4 questions written to {mc_set}",
    ]
    first = orjson.loads(mc_set.read_bytes().splitlines()[0])
    assert first["question"] == qa.mc_prompt(
        "What share of the population was undernourished in 2024?", ["5.2%", "7.6%", "9.1%"]
    )
    # A multiple-choice question is right by its letter: the number in the
    # correct option's text is no expected value (an answer "B" states none).
    assert (first["reference"], first["expected_values"], first["stratum"]) == (
        "B. 7.6%",
        [],
        "food security",
    )


def test_it_names_a_qa_dataset_problem_and_writes_no_question_set(tmp_path, capsys):
    source = tmp_path / "mc.jsonl"
    source.write_text('{"id": "m1", "question": "Q?", "options": ["A", "B"], "correct": 2}\n')
    out = tmp_path / "set.jsonl"
    assert main(["qa", "mc", str(source), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"{source}: line 1, field correct: the correct position 2 is not one of the 2 options' positions "
        "0 to 1 (counting from 0; say so if the file counts from 1)\n"
    )
    assert not out.exists()
    assert main(["qa", "mc", str(source), "--columns", "choices=x"]) == 2
    assert capsys.readouterr().err.startswith('--columns: "choices" is not a column key')
