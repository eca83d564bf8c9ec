"""Ragas-style JSON Lines and CSV as run logs, QA datasets as question sets,
and telling formats apart (scoring.imports.tabular and sniff)."""

import csv
import io
import json
import zipfile
from pathlib import Path

import orjson
import pytest

from scoring import imports, qa
from scoring.__main__ import main as score_main
from scoring.imports import sniff, tabular
from scoring.imports.__main__ import main as import_main
from scoring.logfile import LogFileError, question_errors, read_answers, validate_questions
from tests.conftest import SHARED_DATA

EXAMPLES = SHARED_DATA / "imports"
VERSIONS = {"assistant_version": "bot-2.0", "set_version": "stats-1"}

# Five answers whose scores are worked by hand below: a right number, a
# wrong number no context holds, a question to decline (said by a mapped
# column) that was declined, a cited id that was not retrieved, and a right
# French number with a decimal comma.
RAGAS_ROWS = [
    {
        "id": "r1",
        "user_input": "What share of the population was undernourished in 2024?",
        "retrieved_contexts": ["Undernourishment (FS_UNDERNOURISH_PCT), percent: 7.6 in 2024, 7.9 in 2023."],
        "retrieved_context_ids": ["FS_UNDERNOURISH_PCT"],
        "response": "About 7.6% of the population was undernourished in 2024.",
        "reference": "7.6% in 2024.",
        "cites": ["FS_UNDERNOURISH_PCT"],
    },
    {
        "id": "r2",
        "user_input": "What was the under-five mortality rate in 2020?",
        "retrieved_contexts": [
            "Under-five mortality (HLTH_U5_MORT), per 1,000 live births: 41 in 2020, 44 in 2019."
        ],
        "retrieved_context_ids": ["HLTH_U5_MORT"],
        "response": "The under-five mortality rate was 35 per 1,000 live births in 2020.",
        "reference": "41 per 1,000 live births in 2020.",
        "cites": ["HLTH_U5_MORT"],
    },
    {
        "id": "r3",
        "user_input": "What was the poverty rate in the Eastern district in 2021?",
        "retrieved_contexts": ["Poverty headcount (POV_HEADCOUNT_NAT), national only: 24.5 in 2021."],
        "retrieved_context_ids": ["POV_HEADCOUNT_NAT"],
        "response": "The series has no district values, so I cannot give that figure.",
        "reference": "Decline: the series is national only.",
        "behaviour": "decline",
        "refused": True,
        "cites": [],
    },
    {
        "id": "r4",
        "user_input": "What was the primary completion rate in 2023?",
        "retrieved_contexts": ["Primary completion rate (EDU_PRIM_COMPL): 89.2 in 2023, 88.7 in 2022."],
        "retrieved_context_ids": ["EDU_PRIM_COMPL"],
        "response": "The primary completion rate reached 89.2% in 2023 (EDU_PRIM_COMPL; EDU_STATS_2024).",
        "reference": "89.2% in 2023.",
        "cites": ["EDU_PRIM_COMPL", "EDU_STATS_2024"],
    },
    {
        "id": "r5",
        "user_input": "Quel était le taux de chômage au deuxième trimestre 2025 ?",
        "retrieved_contexts": [
            "Taux de chômage (LAB_UNEMP_RATE_Q) : 7,3 au deuxième trimestre 2025, 7,4 avant."
        ],
        "retrieved_context_ids": ["LAB_UNEMP_RATE_Q"],
        "response": "Le taux de chômage était de 7,3 % au deuxième trimestre 2025.",
        "reference": "7,3 %",
        "lang": "fr",
        "cites": ["LAB_UNEMP_RATE_Q"],
    },
]
RAGAS_MAPPING = {
    "language": "lang",
    "expected_behaviour": "behaviour",
    "declined": "refused",
    "cited_ids": "cites",
}

# The same answers as a CSV whose columns all need the mapping; the list
# cells in each of the forms a CSV holds them.
CSV_HEADER = [
    "Question ID",
    "Lang",
    "Question",
    "Sources",
    "Source IDs",
    "Bot answer",
    "Cited",
    "Gold",
    "Decline?",
    "Refused",
]
CSV_MAPPING = {
    "question_id": "Question ID",
    "language": "Lang",
    "question": "Question",
    "retrieved_contexts": "Sources",
    "retrieved_ids": "Source IDs",
    "answer": "Bot answer",
    "cited_ids": "Cited",
    "reference": "Gold",
    "expected_behaviour": "Decline?",
    "declined": "Refused",
}


def csv_rows() -> list[list[str]]:
    rows = []
    for position, row in enumerate(RAGAS_ROWS):
        # A Python list as pandas writes one, a JSON array, or a bare text.
        contexts = [repr(row["retrieved_contexts"]), json.dumps(row["retrieved_contexts"])][position % 2]
        if position == 4:
            contexts = row["retrieved_contexts"][0]
        cited = json.dumps(row["cites"]) if len(row["cites"]) != 1 else row["cites"][0]
        rows.append(
            [
                row["id"],
                row.get("lang", ""),
                row["user_input"],
                contexts,
                json.dumps(row["retrieved_context_ids"]),
                row["response"],
                cited,
                row["reference"],
                row.get("behaviour", "answer"),
                "yes" if row.get("refused") else "no",
            ]
        )
    return rows


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[str]], *, bom: bool = False) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buffer.getvalue().encode("utf-8"))
    return path


def options(columns=None, **given) -> imports.ImportOptions:
    return imports.ImportOptions(**{**VERSIONS, **given}, columns=columns or {})


def converted(path: Path, file_format: str, columns=None, **given) -> list[dict]:
    out = io.BytesIO()
    imports.convert(path, out, file_format, options(columns, **given))
    return [orjson.loads(line) for line in out.getvalue().splitlines()]


def scores(path: Path, capsys) -> dict:
    assert score_main([str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def counts(result: dict, slice_name: str = "all") -> dict:
    return {measure: (c["k"], c["n"]) for measure, c in result["slices"][slice_name].items()}


# --- Ragas and CSV, converted and scored ---------------------------------------------------------------


@pytest.mark.parametrize("file_format", ["ragas", "csv"])
def test_it_converts_five_answers_that_the_scorer_scores_as_worked_by_hand(tmp_path, capsys, file_format):
    if file_format == "ragas":
        source = write_jsonl(tmp_path / "answers.jsonl", RAGAS_ROWS)
        mapping = RAGAS_MAPPING
    else:
        source = write_csv(tmp_path / "answers.csv", CSV_HEADER, csv_rows(), bom=True)
        mapping = CSV_MAPPING
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        assert imports.convert(source, out, file_format, options(mapping)) == 5

    result = scores(run, capsys)
    # Numeric accuracy: r1, r4 and r5 state their expected value, r2 says 35
    # for 41 (r3 is to be declined). Citations: 5 cited ids (r1, r2, r5 one
    # each, r4 two), of which EDU_STATS_2024 was not retrieved. Numbers stated, years left out: 7.6, 35, 89.2, 7.3, of
    # which only 35 is in no context.
    assert counts(result) == {
        "numeric_accuracy": (3, 4),
        "citation_validity": (4, 5),
        "refusal_accuracy": (1, 1),
        "answer_rate": (4, 4),
        "unsupported_numbers": (1, 4),
        "unsupported_answers": (1, 4),
    }
    assert counts(result, "language=fr")["numeric_accuracy"] == (1, 1)
    assert counts(result, "language=en")["numeric_accuracy"] == (2, 3)
    assert [(f["question_id"], f["kind"]) for f in result["findings"]] == [
        ("r2", "numeric"),
        ("r2", "unsupported"),
        ("r4", "citation"),
    ]


def test_it_writes_the_header_and_each_field_of_the_combined_form(tmp_path):
    lines = converted(write_jsonl(tmp_path / "a.jsonl", RAGAS_ROWS), "ragas", RAGAS_MAPPING)
    assert lines[0] == VERSIONS
    assert lines[1] == {
        "question_id": "r1",
        "language": "en",
        "question": "What share of the population was undernourished in 2024?",
        "reference": "7.6% in 2024.",
        "expected_behaviour": "answer",
        "expected_values": [7.6],
        "retrieved_ids": ["FS_UNDERNOURISH_PCT"],
        "retrieved_values": [7.6, 7.9],
        "retrieved_contexts": ["Undernourishment (FS_UNDERNOURISH_PCT), percent: 7.6 in 2024, 7.9 in 2023."],
        "answer": "About 7.6% of the population was undernourished in 2024.",
        "cited_ids": ["FS_UNDERNOURISH_PCT"],
        "declined": False,
    }
    # A question to decline expects no value, whatever its reference says.
    assert (lines[3]["expected_behaviour"], lines[3]["expected_values"], lines[3]["declined"]) == (
        "decline",
        [],
        True,
    )
    assert (lines[5]["language"], lines[5]["expected_values"], lines[5]["retrieved_values"]) == (
        "fr",
        [7.3],
        [7.3, 7.4],
    )


def test_it_reads_the_same_lines_from_the_csv_as_from_the_json_lines(tmp_path):
    from_jsonl = converted(write_jsonl(tmp_path / "a.jsonl", RAGAS_ROWS), "ragas", RAGAS_MAPPING)
    from_csv = converted(write_csv(tmp_path / "a.csv", CSV_HEADER, csv_rows()), "csv", CSV_MAPPING)
    assert from_csv == from_jsonl


def test_it_numbers_rows_without_an_id_and_keeps_ragas_fields_it_cannot_score(tmp_path):
    rows = [
        {
            "user_input": "Q1?",
            "response": "12.5",
            "reference": "12.5",
            "reference_contexts": ["ctx"],
            "multi_responses": ["12.5", "12.4"],
            "rubrics": {"score1_description": "wrong"},
        },
        {"user_input": "Q2?", "response": "none", "retrieved_contexts": None},
    ]
    lines = converted(write_jsonl(tmp_path / "a.jsonl", rows), "ragas")
    assert [line["question_id"] for line in lines[1:]] == ["row-1", "row-2"]
    assert lines[1]["ragas"] == {
        "reference_contexts": ["ctx"],
        "multi_responses": ["12.5", "12.4"],
        "rubrics": {"score1_description": "wrong"},
    }
    assert "ragas" not in lines[2]
    assert "retrieved_contexts" not in lines[2]
    assert (lines[2]["retrieved_values"], lines[2]["expected_values"]) == ([], [])


def test_it_reads_a_csv_already_in_the_run_logs_terms_without_a_mapping(tmp_path):
    header = [
        "question_id",
        "language",
        "answer",
        "retrieved_ids",
        "retrieved_values",
        "cited_ids",
        "declined",
    ]
    header += ["expected_behaviour", "expected_values", "stratum", "attempt"]
    rows = [
        ["a1", "en", "It was 7.6%.", '["FS"]', "7.6;7.9", "FS", "false", "answer", "7.6", "level", "1"],
        ["a1", "en", "It was 7.9%.", '["FS"]', "[7.6, 7.9]", "", "0", "answer", "7.6", "level", "2"],
        ["a2", "en", "No data.", "", "", "", "yes", "decline", "", "", "1"],
        ["a2", "en", "About 3.", "", "", "", "1", "decline", "", "", "2"],
    ]
    lines = converted(write_csv(tmp_path / "a.csv", header, rows), "csv")
    assert lines[0] == {**VERSIONS, "repetitions": 2}
    assert lines[1] == {
        "question_id": "a1",
        "language": "en",
        "expected_behaviour": "answer",
        "expected_values": [7.6],
        "retrieved_ids": ["FS"],
        "retrieved_values": [7.6, 7.9],
        "answer": "It was 7.6%.",
        "cited_ids": ["FS"],
        "declined": False,
        "stratum": "level",
        "attempt": 1,
    }
    assert [(line["attempt"], line["declined"], line["cited_ids"]) for line in lines[1:]] == [
        (1, False, ["FS"]),
        (2, False, []),
        (1, True, []),
        (2, True, []),
    ]


def test_it_reads_the_list_cells_pandas_writes_for_a_ragas_dataset(tmp_path):
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(
        {
            "user_input": ["What was GDP growth in 2023?", "And in 2022?"],
            "retrieved_contexts": [
                ["GDP growth: 3.1 in 2023.", "It's 2.8 in 2022, revised."],
                ["2.8 in 2022."],
            ],
            "retrieved_context_ids": [["GDP_GROWTH_ANN", "GDP_REV"], ["GDP_GROWTH_ANN"]],
            "response": ["Growth was 3.1% in 2023.", "It was 2.8%."],
            "reference": ["3.1%", "2.8%"],
            "multi_responses": [["3.1%", "3.0%"], ["2.8%"]],
        }
    )
    # pandas writes its index as a first column with no name, and each list as Python's repr.
    source = tmp_path / "ragas.csv"
    frame.to_csv(source)
    assert source.read_text().splitlines()[1].startswith("0,What was GDP growth in 2023?,\"['GDP growth")
    lines = converted(source, "csv")
    assert lines[1]["retrieved_contexts"] == ["GDP growth: 3.1 in 2023.", "It's 2.8 in 2022, revised."]
    assert lines[1]["retrieved_ids"] == ["GDP_GROWTH_ANN", "GDP_REV"]
    assert lines[1]["retrieved_values"] == [3.1, 2.8]
    assert lines[1]["ragas"] == {"multi_responses": ["3.1%", "3.0%"]}
    assert lines[2]["retrieved_contexts"] == ["2.8 in 2022."]


def test_it_takes_a_list_cell_that_is_no_list_literal_as_one_item():
    assert tabular.parse_list_cell("[see the annex]") == ["[see the annex]"]
    assert tabular.parse_list_cell("['a', \"b\"]") == ["a", "b"]
    assert tabular.parse_list_cell('["a", "b"]') == ["a", "b"]
    # Only a list literal is evaluated, never a call.
    assert tabular.parse_list_cell("[__import__('os').getcwd()]") == ["[__import__('os').getcwd()]"]
    assert tabular.parse_list_cell("GDP_GROWTH_ANN") == ["GDP_GROWTH_ANN"]


def test_it_previews_the_first_rows_with_the_mapping_in_use(tmp_path):
    source = write_csv(tmp_path / "a.csv", CSV_HEADER, csv_rows())
    shown = imports.preview(source, "csv", imports.ImportOptions(columns=CSV_MAPPING), rows=2)
    assert shown.format == "csv"
    assert shown.fields == CSV_HEADER
    assert shown.columns == CSV_MAPPING
    assert [row["Question ID"] for row in shown.rows] == ["r1", "r2"]
    assert [line["question_id"] for line in shown.lines] == ["r1", "r2"]
    assert shown.errors == []
    assert shown.samples is None


def test_it_previews_ragas_keys_with_their_default_columns_and_the_errors_of_those_rows(tmp_path):
    rows = [
        {"user_input": "Q?", "response": "7", "extra": 1},
        {"user_input": "Q2?", "response": ""},
        RAGAS_ROWS[0],
    ]
    source = write_jsonl(tmp_path / "a.jsonl", rows)
    shown = imports.preview(source, "ragas", imports.ImportOptions(), rows=2)
    assert shown.fields == ["user_input", "response", "extra"]
    assert shown.columns == {"question": "user_input", "answer": "response"}
    assert len(shown.rows) == 2
    assert [line["question_id"] for line in shown.lines] == ["row-1"]
    assert [str(error) for error in shown.errors] == [
        "line 2, field response: empty: every row needs an answer"
    ]


# --- Bad input: every problem named, nothing written -------------------------------------------------------

MAPPED = ["--columns", "question=Question,answer=Bot answer"]

BAD_INPUTS = [
    pytest.param(
        "a.csv",
        b"Question,Answer\nWhat?,Yes\n",
        MAPPED,
        [
            "line 1, field Bot answer: the answer column 'Bot answer' is not in the header "
            "(the header has 'Question', 'Answer')"
        ],
        id="mapped-column-not-in-header",
    ),
    pytest.param(
        "a.csv",
        b"Question,Bot answer,Question\nWhat?,Yes,Again?\n",
        MAPPED,
        ["line 1, field Question: the column is named 2 times in the header"],
        id="column-named-twice",
    ),
    pytest.param(
        "a.csv",
        b"Question,Reply\nWhat?,Yes\n",
        [],
        [
            'line 1: no answer column: none is named "answer" or "response" (the header has \'Question\', '
            "'Reply'); map the answer field to the column that holds the answers"
        ],
        id="no-answer-column",
    ),
    pytest.param(
        "a.csv",
        b"Question;Bot answer\nWhat?;Yes\n",
        ["--format", "csv", *MAPPED],
        [
            "line 1, field Question: the question column 'Question' is not in the header "
            "(the header has 'Question;Bot answer')",
            "line 1, field Bot answer: the answer column 'Bot answer' is not in the header "
            "(the header has 'Question;Bot answer')",
            "line 1: the header is one column holding ';': this file seems to separate its columns with ';'; "
            "save it as CSV with commas",
        ],
        id="semicolons",
    ),
    pytest.param(
        "a.jsonl",
        b'{"user_input": "Q", "response": "A"}\n{"user_input": "Q2", "response": "B"}\n',
        ["--columns", "stratum=topic"],
        [
            "line 1, field topic: the stratum key 'topic' is on no line of the file (the lines have 'response', 'user_input')"
        ],
        id="mapped-key-on-no-line",
    ),
    pytest.param(
        "a.csv",
        b'Question,Bot answer\nWhat?,Yes,extra,more\nWho?\n"Why?",\n',
        MAPPED,
        [
            "line 2: holds 4 cells, 2 more than the 2 columns of the header",
            "line 3, field Bot answer: missing: the answer 'Bot answer' is not on this line",
            "line 4, field Bot answer: empty: every row needs an answer",
        ],
        id="ragged-and-short-rows",
    ),
    pytest.param(
        "a.csv",
        b"id,answer,expected_values,expected_behaviour,declined\n"
        b"a1,Seven,abc,maybe,perhaps\na2,Fine,7.6;x,answer,no\n,Empty id,,,\n",
        [],
        [
            'line 2, field expected_behaviour: the expected behaviour is "answer" or "decline", not "maybe"',
            'line 2, field expected_values: "abc" is not a number (give numbers with a point for decimals, '
            'several separated by ";" or as a JSON list such as [7.6, 7.9])',
            'line 2, field declined: must be true or false (yes/no, 1/0), not "perhaps"',
            'line 3, field expected_values: "x" is not a number (give numbers with a point for decimals, '
            'several separated by ";" or as a JSON list such as [7.6, 7.9])',
            "line 4, field id: empty: every row needs a question id",
        ],
        id="bad-values",
    ),
    pytest.param(
        "a.csv",
        b"qid,answer,lang\na1,Yes,english!\na2,Yes,en\na1,Again,en\n",
        ["--columns", "question_id=qid,language=lang"],
        [
            'line 2, field lang: "english!" is not a language code such as en, fr or pt-BR (at most 20 characters)',
            "line 4, field qid: 'a1' is already the question id on line 2",
        ],
        id="run-log-rules-and-a-repeated-id",
    ),
    pytest.param(
        "a.csv",
        b"question_id,answer,attempt\na1,One,1\na1,Three,3\na2,None given,\n",
        [],
        [
            "line 3, field attempt: 'a1' has no attempt 2 (attempt 1 on line 2, attempt 3 on line 3): "
            "a question's attempts are numbered from 1 without gaps",
            "line 4, field attempt: missing: other rows give attempts up to 3, so every row says which attempt it is",
        ],
        id="attempts-with-a-gap",
    ),
    pytest.param(
        "a.csv",
        b"question,answer\nOK,fine\nBad,caf\xe9\n",
        [],
        ["line 3: not UTF-8 text: save the file as UTF-8"],
        id="not-utf8",
    ),
    pytest.param(
        "a.jsonl",
        b'{"user_input": "Q", "response": "A"}\n[1, 2]\n{"user_input": "Q2", "response": "A\\u0000"}\n'
        b'{"user_input": ["turn"], "response": "A"}\noops\n',
        [],
        [
            "line 2: not a JSON object but list",
            "line 3, field response: holds the NUL character (\\u0000), which cannot be stored: remove it",
            'line 4, field user_input: must be a text, not ["turn"]',
            "line 5: not JSON (unexpected character, expected a JSON value at column 1)",
        ],
        id="json-lines",
    ),
    pytest.param(
        "a.jsonl",
        b'{"question": "Q", "reply": "A"}\n',
        ["--format", "ragas"],
        [
            'line 1, field answer: missing: no "answer" or "response" on this line; '
            "map the answer field to the key that holds it"
        ],
        id="jsonl-without-an-answer",
    ),
    pytest.param(
        "a.csv",
        b'{"user_input": "Q", "response": "A"}\n',
        ["--format", "csv"],
        ["this file is Ragas-style JSON Lines (user_input, response, ...), not CSV; import it as ragas"],
        id="json-given-as-csv",
    ),
    pytest.param(
        "a.jsonl",
        b"user_input,response\nQ,A\n",
        ["--format", "ragas"],
        [
            "this file looks like CSV (its first line is a header: 'user_input', 'response'), "
            "not Ragas-style JSON Lines; import it as csv"
        ],
        id="csv-given-as-jsonl",
    ),
    pytest.param(
        "a.csv",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
        ["--format", "csv"],
        ["this file is binary data, not CSV"],
        id="binary",
    ),
    pytest.param(
        "a.json",
        b'[{"user_input": "Q", "response": "A"},\n [1, 2],\n {"user_input": "Q3"}]\n',
        ["--format", "ragas"],
        [
            "item 2: not a JSON object but a list",
            'item 3, field answer: missing: no "answer" or "response" on this line; '
            "map the answer field to the key that holds it",
        ],
        id="json-array-items",
    ),
    pytest.param(
        "a.jsonl",
        b'{"doc": {"question": "Q"}, "resps": [["A"]]}\n{"doc": {"query": "Q2"}, "resps": []}\n',
        ["--format", "ragas", "--columns", "question=doc.question,answer=resps[0][0]"],
        [
            "line 2, field doc.question: missing: 'doc' has no 'question' (it has 'query')",
            "line 2, field resps[0][0]: missing: 'resps' has 0 items, no item [0]",
        ],
        id="nested-path-missing",
    ),
    pytest.param(
        "a.csv",
        b"What was the poverty rate in 2021?,24.5 percent\nAnd in 2020?,25.1\n",
        ["--format", "csv"],
        [
            "line 1: this file seems to have no header row: its first line holds data ('What was the poverty "
            "rate in 2…', '24.5 percent'), not column names; add a header line naming the columns, or map "
            "the columns by position, col1 being the first: --columns question=col1,answer=col2"
        ],
        id="csv-without-header",
    ),
]


@pytest.mark.parametrize(("name", "content", "arguments", "expected"), BAD_INPUTS)
def test_it_names_every_problem_and_writes_nothing(tmp_path, capsys, name, content, arguments, expected):
    source = tmp_path / name
    source.write_bytes(content)
    out = tmp_path / "run.jsonl"
    versions = ["--assistant-version", "bot-2.0", "--set-version", "stats-1"]
    assert import_main([str(source), *arguments, *versions, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"{source}: {message}" for message in expected]
    assert captured.out == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [source]


def test_it_refuses_a_zip_given_as_csv(tmp_path):
    source = tmp_path / "log.csv"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("header.json", "{}")
    with pytest.raises(LogFileError) as raised:
        imports.convert(source, io.BytesIO(), "csv", options())
    assert [str(error) for error in raised.value.errors] == [
        "line 1: this file is a zip archive (an Inspect .eval log?), not CSV; import it as inspect"
    ]


def test_it_names_the_missing_versions_and_an_unknown_field_and_writes_nothing_to_out(tmp_path):
    source = write_jsonl(tmp_path / "a.jsonl", RAGAS_ROWS)
    out = io.BytesIO()
    given = imports.ImportOptions(set_version="bad version", columns={"answers": "response"})
    with pytest.raises(LogFileError) as raised:
        imports.convert(source, out, "ragas", given)
    assert [str(error) for error in raised.value.errors] == [
        "line 1, field assistant_version: missing: a Ragas or CSV file does not name versions; "
        "give the assistant version the answers are imported under",
        'line 1, field set_version: "bad version" holds a space; a label holds only ASCII letters, digits, '
        "'.', '_', '-' and '+', starting with a letter or a digit",
        "line 1, field answers: 'answers' is not a field of the run log; the fields are "
        + ", ".join(imports.TARGET_FIELDS),
    ]
    assert out.getvalue() == b""


def test_it_stops_listing_at_max_errors_and_counts_the_rest(tmp_path):
    source = write_jsonl(tmp_path / "a.jsonl", [{"user_input": "Q", "response": ""}] * 30)
    with pytest.raises(LogFileError) as raised:
        imports.convert(source, io.BytesIO(), "ragas", options(), max_errors=10)
    assert (len(raised.value.errors), raised.value.total) == (10, 30)


def test_it_says_an_empty_file_holds_no_rows(tmp_path):
    source = tmp_path / "a.csv"
    source.write_text("")
    with pytest.raises(LogFileError) as raised:
        imports.convert(source, io.BytesIO(), "csv", options())
    assert [str(error) for error in raised.value.errors] == ["line 1: the file holds no rows"]


# --- Spec 001's QA datasets as question sets -------------------------------------------------------------


def test_it_writes_an_open_ended_dataset_as_a_question_set(tmp_path):
    source = write_csv(
        tmp_path / "open.csv",
        ["qid", "prompt", "gold", "topic"],
        [
            ["o1", "Undernourishment in 2024?", "7.6% in 2024", "food"],
            ["o2", "Who publishes it?", "The office", "food"],
        ],
    )
    out = io.BytesIO()
    count = tabular.qa_question_set(
        source, "open", "id=qid,question=prompt,reference=gold,stratum=topic", language="en", out=out
    )
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert count == 2
    assert lines == [
        {
            "question_id": "o1",
            "language": "en",
            "question": "Undernourishment in 2024?",
            "reference": "7.6% in 2024",
            "expected_behaviour": "answer",
            "expected_values": [7.6],
            "stratum": "food",
        },
        {
            "question_id": "o2",
            "language": "en",
            "question": "Who publishes it?",
            "reference": "The office",
            "expected_behaviour": "answer",
            "expected_values": [],
            "stratum": "food",
        },
    ]
    assert all(question_errors(number, line) == [] for number, line in enumerate(lines, start=1))


def test_it_writes_a_multiple_choice_dataset_with_its_prompt_and_the_correct_option_as_reference(tmp_path):
    source = write_jsonl(
        tmp_path / "mc.jsonl",
        [
            {
                "id": "m1",
                "question": "What is the capital of France?",
                "options": ["Lyon", "Paris", "Nice"],
                "correct": 2,
            }
        ],
    )
    out = tmp_path / "set.jsonl"
    with open(out, "wb") as stream:
        assert tabular.qa_question_set(source, "mc", qa.Columns(), out=stream, correct_from=1) == 1
    assert validate_questions(out) == 1
    (line,) = [orjson.loads(text) for text in out.read_bytes().splitlines()]
    assert line["question"] == qa.mc_prompt("What is the capital of France?", ["Lyon", "Paris", "Nice"])
    assert line["question"].splitlines()[2:5] == ["A. Lyon", "B. Paris", "C. Nice"]
    assert (line["reference"], line["expected_values"]) == ("B. Paris", [])


def test_it_names_the_dataset_problems_on_their_lines_and_writes_nothing(tmp_path):
    source = write_csv(tmp_path / "open.csv", ["id", "question", "answer"], [["o1", "Q?", "A"]])
    out = io.BytesIO()
    with pytest.raises(LogFileError) as raised:
        tabular.qa_question_set(source, "open", None, out=out)
    assert [str(error) for error in raised.value.errors] == [
        "line 1, field reference: missing: the reference column 'reference' is not in the header "
        "(the header has 'id', 'question', 'answer')"
    ]
    assert out.getvalue() == b""
    with pytest.raises(LogFileError) as raised:
        tabular.qa_question_set(tmp_path / "absent.csv", "open", None, out=out)
    assert [str(error) for error in raised.value.errors] == ["line 1: no such file"]


def test_it_puts_a_question_set_problem_under_the_dataset_column(tmp_path):
    source = write_csv(
        tmp_path / "open.csv", ["id", "question", "reference", "topic"], [["o1", "Q?", "A", "t" * 101]]
    )
    with pytest.raises(LogFileError) as raised:
        tabular.qa_question_set(source, "open", "stratum=topic", out=io.BytesIO())
    assert [str(error) for error in raised.value.errors] == [
        "line 2, field topic: 101 characters long, more than the 100 allowed"
    ]


# --- The example files ---------------------------------------------------------------------------------

EXAMPLE_CSV_MAPPING = {
    "question_id": "ID",
    "language": "Lang",
    "question": "Question",
    "retrieved_contexts": "Sources",
    "retrieved_ids": "Source IDs",
    "answer": "Bot answer",
    "cited_ids": "Cited",
    "declined": "Declined",
    "reference": "Gold answer",
    "expected_behaviour": "Expected",
}


@pytest.mark.parametrize(
    ("name", "file_format", "columns", "count"),
    [
        ("ragas_example.jsonl", "ragas", {}, 5),
        ("answers_example.csv", "csv", EXAMPLE_CSV_MAPPING, 5),
    ],
)
def test_it_converts_each_example_answer_file_into_a_run_log_the_app_reads(
    tmp_path, name, file_format, columns, count
):
    source = EXAMPLES / name
    assert sniff.detect_format(source, name) == file_format
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        assert imports.convert(source, out, file_format, options(columns)) == count
    assert len(list(read_answers(run))) == count


def test_it_scores_the_example_csv_as_its_rows_say(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    with open(run, "wb") as out:
        imports.convert(EXAMPLES / "answers_example.csv", out, "csv", options(EXAMPLE_CSV_MAPPING))
    result = scores(run, capsys)
    assert counts(result)["numeric_accuracy"] == (3, 4)
    assert counts(result)["refusal_accuracy"] == (1, 1)
    assert [(f["question_id"], f["kind"]) for f in result["findings"]] == [
        ("q03", "numeric"),
        ("q03", "unsupported"),
        ("q05", "citation"),
    ]


@pytest.mark.parametrize(
    ("name", "task", "columns", "count"),
    [
        (
            "qa_open_example.csv",
            "open",
            "id=qid,question=Question,reference=Reference answer,stratum=Topic",
            4,
        ),
        ("qa_mc_example.jsonl", "mc", "stratum=topic", 4),
    ],
)
def test_it_converts_each_example_dataset_into_a_question_set(tmp_path, name, task, columns, count):
    out = tmp_path / "set.jsonl"
    with open(out, "wb") as stream:
        assert tabular.qa_question_set(EXAMPLES / name, task, columns, out=stream) == count
    assert validate_questions(out) == count


# --- Telling formats apart -------------------------------------------------------------------------------


def sniffed(tmp_path: Path, name: str, content: bytes) -> str | None:
    path = tmp_path / name
    path.write_bytes(content)
    return imports.detect_format(path, name)


def test_it_tells_each_format_from_the_name_and_first_bytes(tmp_path):
    inspect_json = (
        b'{\n  "version": 2,\n  "status": "success",\n  "eval": {\n    "task": "qa"' + b" " * 20000 + b"}}"
    )
    assert sniffed(tmp_path, "log.zip", b"PK\x03\x04rest") == "inspect"
    assert sniffed(tmp_path, "log.eval", b"anything") == "inspect"
    assert sniffed(tmp_path, "log.json", inspect_json) == "inspect"
    assert sniffed(tmp_path, "a.jsonl", b'{"user_input": "Q", "response": "A"}\n') == "ragas"
    assert sniffed(tmp_path, "a.jsonl", b'\xef\xbb\xbf{"response": "A"}\n') == "ragas"
    assert sniffed(tmp_path, "a.txt", b"Question,Bot answer\nQ,A\n") == "csv"
    assert sniffed(tmp_path, "a.csv", b"answer\nA\n") == "csv"
    assert sniffed(tmp_path, "run.jsonl", (SHARED_DATA / "running_example.jsonl").read_bytes()) is None
    assert sniffed(tmp_path, "run.jsonl", b'{"assistant_version": "1", "set_version": "2"}\n') is None
    assert sniffed(tmp_path, "a.txt", b"just some words\n") is None
    assert sniffed(tmp_path, "a.jsonl.gz", b"\x1f\x8b\x08rest") is None


def test_it_says_what_a_file_is_when_it_is_not_the_format_claimed(tmp_path):
    def problem(name: str, content: bytes, claimed: str) -> str | None:
        path = tmp_path / name
        path.write_bytes(content)
        return sniff.format_problem(path, name, claimed)

    run_log = (SHARED_DATA / "running_example.jsonl").read_bytes()
    assert problem("a.csv", b"PK\x03\x04", "csv") == (
        "this file is a zip archive (an Inspect .eval log?), not CSV; import it as inspect"
    )
    assert problem("run.jsonl", run_log, "ragas") == (
        "this file is already a run log in this app's own format, not Ragas-style JSON Lines: "
        "it needs no import, upload it as it is"
    )
    assert (
        problem("a.csv", b'{"id": 1}\n', "csv")
        == "this file is JSON Lines (its first object has id), not CSV"
    )
    assert problem("a.csv", b"\x1f\x8b\x08", "csv") == (
        "this file is gzip-compressed: decompress it (gunzip) and upload the .jsonl inside"
    )
    assert problem("a.csv", b"\xff\xfeQ\x00,\x00", "csv") == "this file is UTF-16: save it as UTF-8"
    assert problem("a.jsonl", b"Q,A\n", "inspect") == (
        "this file looks like CSV (its first line is a header: 'Q', 'A'), not an Inspect eval log; import it as csv"
    )
    assert problem("a.jsonl", b'{"user_input": "Q"}\n', "inspect") == (
        "this file is Ragas-style JSON Lines (user_input, response, ...), not an Inspect eval log; "
        "import it as ragas"
    )
    assert problem("a.jsonl", b'{"question": "Q", "reply": "A"}\n', "ragas") is None
    assert problem("a.csv", b"Q,A\n", "csv") is None
    assert problem("a.eval", b"PK\x03\x04", "inspect") is None


def test_an_empty_column_turns_a_default_off(tmp_path):
    source = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {
                "user_input": "Q?",
                "response": "It was 7.6.",
                "retrieved_contexts": ["7.6 in 2024"],
                "reference": "7.6",
            }
        ],
    )
    kept = converted(source, "ragas")
    assert (kept[1]["retrieved_contexts"], kept[1]["retrieved_values"]) == (["7.6 in 2024"], [7.6])
    off = converted(source, "ragas", {"retrieved_contexts": ""})
    assert "retrieved_contexts" not in off[1]
    assert off[1]["retrieved_values"] == []


def test_a_line_too_long_to_hold_is_refused_on_its_line_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(tabular, "SOURCE_LINE_MAX_BYTES", 200)
    csv_path = tmp_path / "a.csv"
    csv_path.write_text("question_id,answer\nq1,It was 7.6.\nq2," + "x" * 500 + "\n")
    jsonl_path = write_jsonl(tmp_path / "a.jsonl", [{"user_input": "Q?", "response": "y" * 500}])
    for path, file_format, line in ((csv_path, "csv", 3), (jsonl_path, "ragas", 1)):
        with pytest.raises(LogFileError) as raised:
            imports.convert(path, io.BytesIO(), file_format, options())
        assert [(error.line, "longer than" in error.message) for error in raised.value.errors] == [
            (line, True)
        ]


# --- Nested fields, JSON arrays and files without a header (issue 26) -----------------------------------

# Ragas' repository keeps datasets as one indented JSON array (json.dump(..., indent=4)).
RAGAS_ARRAY = [
    {
        "user_input": "What share of the population was undernourished in 2024?",
        "retrieved_contexts": ["Undernourishment, percent: 7.6 in 2024, 7.9 in 2023."],
        "response": "About 7.6% in 2024.",
        "reference": "7.6% in 2024.",
    },
    {
        "user_input": "What was the under-five mortality rate in 2020?",
        "retrieved_contexts": ["Under-five mortality, per 1,000 live births: 41 in 2020."],
        "response": "It was 35 per 1,000 live births.",
        "reference": "41 per 1,000 live births.",
    },
]


def test_it_reads_a_ragas_json_array_as_json_lines_are_read(tmp_path):
    array = tmp_path / "ragas_dataset.json"
    array.write_text(json.dumps(RAGAS_ARRAY, indent=4), encoding="utf-8")
    assert imports.detect_format(array, array.name) == "ragas"
    lines = write_jsonl(tmp_path / "ragas_dataset.jsonl", RAGAS_ARRAY)
    assert converted(array, "ragas") == converted(lines, "ragas")
    assert [line["question_id"] for line in converted(array, "ragas")[1:]] == ["row-1", "row-2"]
    shown = imports.preview(array, "ragas", options(), rows=1)
    assert (shown.rows, shown.errors) == ([RAGAS_ARRAY[0]], [])


def test_it_refuses_a_json_array_over_its_size_limit(tmp_path, monkeypatch):
    import scoring.jsonarray

    monkeypatch.setattr(scoring.jsonarray, "MAX_JSON_ARRAY_BYTES", 100)
    array = tmp_path / "big.json"
    array.write_text(json.dumps(RAGAS_ARRAY), encoding="utf-8")
    with pytest.raises(LogFileError) as raised:
        converted(array, "ragas")
    assert [str(error) for error in raised.value.errors] == [
        f"the file: a JSON array is read whole, up to 100 bytes, and this one holds {array.stat().st_size} "
        "bytes: write it as JSON Lines, one object a line (Ragas' to_jsonl does)"
    ]


# An lm-evaluation-harness --log_samples line, cut down to what a mapping reads.
LM_EVAL_SAMPLE = {
    "id": 7,
    "doc": {"question": "How many legs has a spider?", "answer": "8"},
    "target": "8",
    "outputs": [["A spider has 8 legs."]],
    "filtered": ["8"],
}


def test_it_maps_nested_fields_and_list_items_in_json_lines_and_csv(tmp_path):
    mapping = {
        "question_id": "id",
        "question": "doc.question",
        "answer": "outputs[0][0]",
        "reference": "target",
    }
    source = write_jsonl(tmp_path / "samples_gsm8k.jsonl", [LM_EVAL_SAMPLE])
    # The preview offers the paths a mapping can name.
    assert imports.preview(source, "ragas", options()).fields == [
        "id",
        "doc",
        "target",
        "outputs",
        "filtered",
        "doc.question",
        "doc.answer",
        "outputs[0]",
        "outputs[0][0]",
    ]
    [_, line] = converted(source, "ragas", mapping)
    assert (line["question_id"], line["question"], line["answer"], line["reference"]) == (
        "7",
        "How many legs has a spider?",
        "A spider has 8 legs.",
        "8",
    )
    # The same record as pandas writes it to CSV: nested values as Python literals.
    import pandas as pd

    table = tmp_path / "samples.csv"
    pd.DataFrame([LM_EVAL_SAMPLE]).to_csv(table, index=False)
    [_, from_csv] = converted(table, "csv", mapping)
    assert from_csv == line
    with pytest.raises(LogFileError) as raised:
        converted(table, "csv", {**mapping, "question": "document.question"})
    assert [str(error) for error in raised.value.errors] == [
        "line 1, field document.question: the question column 'document' is not in the header (the header "
        "has 'id', 'doc', 'target', 'outputs', 'filtered')"
    ]


def test_it_reads_a_csv_without_header_by_position(tmp_path):
    source = tmp_path / "no_header.csv"
    source.write_text(
        "What was the poverty rate in 2021?,24.5 percent\nAnd in 2020?,25.1\n", encoding="utf-8"
    )
    lines = converted(source, "csv", {"question": "col1", "answer": "col2"})
    assert [(line["question_id"], line["question"], line["answer"]) for line in lines[1:]] == [
        ("row-1", "What was the poverty rate in 2021?", "24.5 percent"),
        ("row-2", "And in 2020?", "25.1"),
    ]


def test_it_tells_a_ragas_array_from_json_lines_where_a_run_log_was_expected(tmp_path):
    array = tmp_path / "dataset.json"
    array.write_text(json.dumps(RAGAS_ARRAY, indent=2), encoding="utf-8")
    assert sniff.other_tool(array) == "a Ragas dataset, one JSON array (user_input, response, ...)"
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"stem": "Q", "label": "A"}]), encoding="utf-8")
    assert sniff.look(other) == sniff.Look("json_array", "stem, label")
    assert sniff.format_problem(other, other.name, "csv") == "this file is one JSON array, not CSV"


def test_it_refuses_one_indented_json_object_as_ragas_rows(tmp_path):
    # Ragas' annotated runs (docs/_static/edited_chain_runs.json): one object of metric -> runs.
    document = tmp_path / "edited_chain_runs.json"
    document.write_text(json.dumps({"answer_correctness": [{"metric_input": RAGAS_ARRAY[0]}]}, indent=4))
    with pytest.raises(LogFileError) as raised:
        converted(document, "ragas")
    assert [str(error) for error in raised.value.errors] == [
        "line 1: this file is one JSON object spread over many lines, not JSON Lines (one object a line) "
        "or a JSON array of rows: write the rows one object a line, as Ragas' to_jsonl does"
    ]


def test_an_array_nested_past_any_decoder_is_a_json_array_not_a_crash(tmp_path):
    # Found by the form fuzz (tests/app/core/test_form_fuzz.py): a RecursionError, a 500 on upload.
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 5000 + b"]" * 5000)
    assert sniff.look(deep, deep.name).kind == "json_array"
    assert imports.detect_format(deep, deep.name) is None  # no importer reads it: the page says so
