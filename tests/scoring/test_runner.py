"""score_file: byte-range chunks read by each worker, findings written as
they are found, the combined form read once, timing kept as columns."""

import io
import json
import resource
import time
from array import array

import pytest

from scoring import runner, synthetic, timing
from scoring.__main__ import main
from scoring.logfile import LogFileError, questions_from_combined
from scoring.measures import score_run
from scoring.runner import FINDINGS_JSON, FINDINGS_TEXT, _chunk_ranges, _read_range, score_file


def generated(tmp_path, *, size=400, repetitions=1, timeout_share=0.0, combined=False):
    questions = synthetic.generate_question_set(questions=size, seed=11)
    answers = synthetic.generate_run(
        question_set=questions,
        answers=size,
        seed=12,
        repetitions=repetitions,
        timeout_share=timeout_share,
    )
    by_id = {q["question_id"]: q for q in questions}
    if combined:
        for answer in answers:
            question = by_id[answer["question_id"]]
            answer["expected_behaviour"] = question["expected_behaviour"]
            answer["expected_values"] = question["expected_values"]
    path = tmp_path / "run.jsonl"
    header = {"assistant_version": "a-1", "set_version": "s"}
    if repetitions > 1:
        header["repetitions"] = repetitions
    synthetic.write_jsonl(path, answers, header=header)
    return path, answers, by_id


def figures(scores):
    return scores.answers, scores.not_run, scores.slices, scores.stable, scores.timing


@pytest.mark.parametrize("repetitions", [1, 3])
def test_every_chunk_size_and_worker_count_gives_the_same_scores(tmp_path, repetitions):
    # Chunks that cut lines anywhere, about a line per chunk and several, and one chunk.
    path, answers, questions = generated(tmp_path, size=150, repetitions=repetitions, timeout_share=0.05)
    whole = score_file(path, questions, chunk_bytes=1 << 30)
    in_memory = score_run(answers, questions, repetitions=repetitions)
    assert whole.slices == in_memory.slices
    assert [f.as_dict() for f in whole.findings] == [f.as_dict() for f in in_memory.findings]
    for chunk_bytes, workers in ((700, 1), (1000, 2), (7777, 2)):
        scores = score_file(path, questions, chunk_bytes=chunk_bytes, workers=workers)
        assert figures(scores) == figures(whole), (chunk_bytes, workers)
        assert scores.findings == whole.findings


def test_every_core_scores_the_combined_form_without_a_header_line(tmp_path):
    # As the reference script reads it: expected values on each line and no header. Issue 28
    # measured every core at 110 % CPU on such a file; the chunks must go to worker processes,
    # whose CPU comes back to this one when the pool is done.
    questions = synthetic.generate_question_set(questions=5000, seed=13)
    answers = synthetic.generate_run(question_set=questions, answers=5000, seed=14)
    path = tmp_path / "combined.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in synthetic.combined_form(questions, answers)))
    assert "question_id" in path.read_text().splitlines()[0]
    start = time.process_time()
    alone = score_file(path, None, chunk_bytes=1 << 30)
    alone_cpu = time.process_time() - start
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    split = score_file(path, None, chunk_bytes=200_000, workers=2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert figures(split) == figures(alone) and split.findings == alone.findings
    workers_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert workers_cpu > alone_cpu / 2, f"worker processes took {workers_cpu:.2f} s of {alone_cpu:.2f} s"


def test_each_line_is_read_by_exactly_one_chunk_wherever_the_cuts_fall(tmp_path):
    path = tmp_path / "lines.txt"
    lines = [b"a" * length for length in (0, 5, 1, 0, 12, 3)]
    path.write_bytes(b"\n".join(lines))  # no newline at the end
    for size in range(1, 30):
        with open(path, "rb") as stream:
            read = [
                line for start, end in _chunk_ranges(path, size) for line in _read_range(stream, start, end)
            ]
        assert read == lines, size


@pytest.mark.parametrize("block_values", [7, runner.SPILL_BLOCK_VALUES])
def test_timing_by_slice_equals_the_summary_of_each_lines_timing(tmp_path, monkeypatch, block_values):
    # Spilled timing columns are read back in blocks: one, or many with a part-block at the end.
    monkeypatch.setattr(runner, "SPILL_BLOCK_VALUES", block_values)
    path, answers, questions = generated(tmp_path, size=300, timeout_share=0.1)
    scores = score_file(path, questions, chunk_bytes=5000, workers=2)
    timings = [timing.answer_timing(answer) for answer in answers]
    assert scores.timing["all"] == timing.timing_summary(timings)
    french = [t for t, answer in zip(timings, answers, strict=True) if answer["language"] == "fr"]
    assert scores.timing["language=fr"] == timing.timing_summary(french)
    assert scores.timing["all"]["failures"]["counts"]["timeout"] > 0


@pytest.mark.parametrize("findings_format", [FINDINGS_JSON, FINDINGS_TEXT])
def test_findings_written_out_are_the_findings_kept_in_order(tmp_path, findings_format):
    path, _, questions = generated(tmp_path)
    kept = score_file(path, questions)
    out = io.BytesIO()
    written = score_file(path, questions, findings_to=out, findings_format=findings_format, chunk_bytes=4096)
    assert written.findings == [] and written.finding_count == len(kept.findings) > 50
    lines = out.getvalue().decode().splitlines()
    if findings_format == FINDINGS_JSON:
        assert [json.loads(line.strip().rstrip(",")) for line in lines] == [
            f.as_dict() for f in kept.findings
        ]
    else:
        assert lines == [f"  {f.question_id}: {f.kind}: {f.detail}" for f in kept.findings]


def test_the_combined_form_scores_as_its_questions_would(tmp_path):
    path, _, _ = generated(tmp_path, combined=True)
    questions = {q["question_id"]: q for q in questions_from_combined(path)}
    assert figures(score_file(path, None, chunk_bytes=3000, workers=2)) == figures(
        score_file(path, questions)
    )


def test_the_combined_form_with_repetitions_counts_attempts_not_run(tmp_path):
    path, answers, _ = generated(tmp_path, size=40, repetitions=2, combined=True)
    # Drop the second attempt of the first question.
    dropped = next(a for a in answers if a["attempt"] == 2)
    kept = [a for a in answers if a is not dropped]
    synthetic.write_jsonl(path, kept, header={"repetitions": 2})
    scores = score_file(path, None, chunk_bytes=2000, workers=2)
    assert scores.not_run == 1 and scores.answers == len(kept)
    assert [f.question_id for f in scores.findings if f.kind == "not_run"] == [dropped["question_id"]]


def test_a_question_answered_twice_is_named_on_its_later_lines_across_chunks(tmp_path):
    path, answers, questions = generated(tmp_path, size=200)
    twice = answers[3]
    lines = [*answers[:150], dict(twice, answer="again"), *answers[150:], dict(twice, answer="thrice")]
    synthetic.write_jsonl(path, lines, header={"assistant_version": "a-1", "set_version": "s"})
    for workers in (1, 2):
        with pytest.raises(LogFileError) as caught:
            score_file(path, questions, chunk_bytes=3000, workers=workers)
        qid = twice["question_id"]
        assert [(e.line, e.field, e.message) for e in caught.value.errors] == [
            (152, "question_id", f"{qid!r} already answered on line 5"),
            (203, "question_id", f"{qid!r} already answered on line 5"),
        ]


@pytest.mark.parametrize("numpy_from", [10, 10**9])
def test_an_answer_given_twice_in_the_combined_form_is_found_by_its_hash(tmp_path, monkeypatch, numpy_from):
    monkeypatch.setattr(timing, "NUMPY_SORT_FROM", numpy_from)
    path, answers, _ = generated(tmp_path, size=200, combined=True)
    twice = answers[7]
    synthetic.write_jsonl(path, [*answers[:120], twice, *answers[120:]], header={"set_version": "s"})
    with pytest.raises(LogFileError) as caught:
        score_file(path, None, chunk_bytes=3000, workers=2)
    assert [(e.line, e.message) for e in caught.value.errors] == [
        (122, f"{twice['question_id']!r} already answered on line 9")
    ]


def test_large_summaries_sort_with_numpy_to_the_same_figures(monkeypatch):
    values = array("d", [(index * 7919) % 1013 / 7 for index in range(2001)])
    by_list = timing.summarise(list(values))
    monkeypatch.setattr(timing, "NUMPY_SORT_FROM", 100)
    assert timing.summarise(values) == by_list


def test_bad_lines_are_numbered_through_the_whole_file(tmp_path):
    path, answers, questions = generated(tmp_path, size=300)
    text = path.read_text().splitlines()
    text[120] = "{not json"
    text[250] = json.dumps({**answers[249], "retrieved_values": ["7"]})
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(LogFileError) as caught:
        score_file(path, questions, chunk_bytes=2500, workers=2)
    assert [(e.line, e.field) for e in caught.value.errors] == [(121, None), (251, "retrieved_values")]


def test_the_cli_prints_valid_json_with_every_finding(tmp_path, capsys):
    path, _, _ = generated(tmp_path, combined=True)
    kept = score_file(path, None)
    assert main([str(path), "--json", "--workers", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["findings"] == [f.as_dict() for f in kept.findings]
    assert printed["slices"]["all"]["numeric_accuracy"]["n"] == kept.slices["all"]["numeric_accuracy"]["n"]


def test_the_cli_prints_an_empty_list_when_nothing_is_found(tmp_path, capsys):
    line = {
        "question_id": "q1",
        "language": "en",
        "retrieved_ids": ["A_B_C"],
        "retrieved_values": [7.6],
        "answer": "It was 7.6 (A_B_C).",
        "cited_ids": ["A_B_C"],
        "declined": False,
        "expected_behaviour": "answer",
        "expected_values": [7.6],
    }
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert main([str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.endswith("findings: 0\n")


def test_the_cli_scores_against_a_question_set_as_the_library_does_with_questions_not_run(tmp_path, capsys):
    path, answers, questions = generated(tmp_path, size=300)
    synthetic.write_jsonl(path, answers[:-20], header={"assistant_version": "a-1", "set_version": "s"})
    question_file = tmp_path / "questions.jsonl"
    synthetic.write_jsonl(question_file, list(questions.values()), header={"set_version": "s"})
    expected = score_run(answers[:-20], questions, slice_fields=("stratum", "language"))
    argv = [
        str(path),
        "--questions",
        str(question_file),
        "--json",
        "--slice",
        "stratum",
        "--slice",
        "language",
    ]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["not_run"] == expected.not_run == 20
    assert {
        name: {m: (c["k"], c["n"]) for m, c in figures.items()} for name, figures in printed["slices"].items()
    } == {
        name: {m: (c["k"], c["n"]) for m, c in figures.items()} for name, figures in expected.slices.items()
    }
    assert printed["findings"] == [f.as_dict() for f in expected.findings]


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    # As `| head` does once it has its lines: the reading end is closed, so
    # the CLI's next write meets a broken pipe.
    import os
    import subprocess
    import sys

    path, _, _ = generated(tmp_path, size=50, combined=True)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "scoring", str(path)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr.decode()
