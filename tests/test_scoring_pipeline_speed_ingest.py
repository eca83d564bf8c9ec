"""A large run file is validated in parts by several processes at once
(issue 16); what is stored, or why the run is rejected, is the same as when
one pass validates every line."""

import itertools
import json
from pathlib import Path
from unittest import mock

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import TransactionTestCase

from reviewapp.models import Answer, Run
from reviewapp.services import runs
from reviewapp.services.question_sets import set_version_create
from reviewapp.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question

QUESTIONS = 60
REPETITIONS = 2


def answer_lines(questions: list[dict]) -> list[str]:
    rows = synthetic.generate_run(
        question_set=questions, answers=len(questions), seed=41, repetitions=REPETITIONS, timeout_share=0.1
    )
    lines = [json.dumps({"repetitions": REPETITIONS, "timeout_s": 600})]
    lines += [json.dumps(row, ensure_ascii=False) for row in rows]
    # Text COPY must escape, a byte-order mark, a tab between fields and a
    # blank line, spread over the file so that every part holds some.
    for index in range(3, len(lines), 17):
        lines[index] = lines[index].replace(
            '"language"', '"note": "tab\\there \\\\ back\\"slash",\t"language"'
        )
    lines[40] = "\ufeff" + lines[40]
    lines[70] = lines[70] + "\n"
    return lines


class PartsTests(TransactionTestCase):
    """Each file is stored twice, in one pass and in parts, under two versions."""

    def setUp(self):
        if connection.vendor != "postgresql":
            self.skipTest("the answers are validated in parts on PostgreSQL only")
        self.questions = synthetic.generate_question_set(questions=QUESTIONS, seed=40, set_version="parts-1")
        self.questions[7]["question_id"] = "q\\7"
        set_version_create(version="parts-1", questions=[normalise_question(q) for q in self.questions])

    def ingest(self, lines: list[str], *, label: str, parts: bool) -> Run:
        # The label in the header: a file sent again would lead to the run that holds it.
        header = json.dumps({**json.loads(lines[0]), "assistant_version": label})
        content = ("\r\n".join([header, *lines[1:]]) + "\r\n").encode()
        upload = SimpleUploadedFile(f"answers_run_{label}_set-parts-1.jsonl", content)
        threshold = 0 if parts else 1 << 62
        # Three parts, whatever the machine's cores.
        with (
            mock.patch.object(runs, "PARALLEL_INGEST_BYTES", threshold),
            mock.patch.object(runs.os, "cpu_count", return_value=3),
            mock.patch.object(runs, "queue_scoring"),
            mock.patch.object(runs, "_copy_parts", wraps=runs._copy_parts) as copy_parts,
        ):
            run = run_receive(upload=upload).run
            runs.run_ingest(run_id=run.id)
        self.assertEqual(copy_parts.call_count, int(parts))
        if parts:
            self.assertEqual(len(copy_parts.call_args.args[2]), 3)  # three parts
        return Run.objects.get(id=run.id)

    def stored(self, run: Run) -> list[tuple]:
        return list(
            Answer.objects.filter(run=run)
            .order_by("id")
            .values_list("line_number", "question_id", "attempt", "status", "language", "declined", "raw")
        )

    def assert_same_outcome(self, lines: list[str], *, clean: bool = False) -> Run:
        one_pass = self.ingest(lines, label="bot-1", parts=False)
        returned = []
        in_parts_of = runs._insert_answers_in_parts

        def recorded(*args):
            returned.append(in_parts_of(*args))
            return returned[-1]

        with mock.patch.object(runs, "_insert_answers_in_parts", recorded):
            in_parts = self.ingest(lines, label="bot-2", parts=True)
        # A clean file is stored from the parts; any problem, and one pass names them all.
        self.assertEqual(returned[0] is not None, clean)
        for name in ("status", "answer_count", "line_errors", "line_error_count", "error", "repetitions"):
            self.assertEqual(getattr(in_parts, name), getattr(one_pass, name), name)
        self.assertEqual(self.stored(in_parts), self.stored(one_pass))
        return in_parts

    def test_it_stores_the_same_answers_in_line_order(self):
        run = self.assert_same_outcome(answer_lines(self.questions), clean=True)
        self.assertEqual((run.status, run.answer_count), ("stored", QUESTIONS * REPETITIONS))
        self.assertTrue(Answer.objects.filter(run=run, raw__contains="\t").exists())

    def test_a_bad_line_in_a_later_part_rejects_the_run_with_the_same_errors(self):
        lines = answer_lines(self.questions)
        lines[-5] = lines[-5].replace('"language": "', '"language": 7, "x": "')
        self.assertEqual(self.assert_same_outcome(lines).status, "rejected")

    def test_an_attempt_given_twice_across_parts_rejects_the_run_with_the_same_errors(self):
        lines = answer_lines(self.questions)
        lines.append(lines[2])
        self.assertEqual(self.assert_same_outcome(lines).status, "rejected")

    def test_a_question_outside_the_set_in_a_later_part_rejects_the_run(self):
        lines = answer_lines(self.questions)
        lines[-3] = lines[-3].replace(f'"{json.loads(lines[-3])["question_id"]}"', '"nowhere"', 1)
        self.assertEqual(self.assert_same_outcome(lines).status, "rejected")

    def test_an_attempt_missing_below_a_later_one_rejects_the_run(self):
        lines = answer_lines(self.questions)
        first = next(i for i, line in enumerate(lines) if '"attempt": 1' in line and i > 100)
        del lines[first]
        self.assertEqual(self.assert_same_outcome(lines).status, "rejected")

    def test_a_line_over_the_limit_in_a_later_part_rejects_the_run(self):
        lines = answer_lines(self.questions)
        with self.settings(MAX_ANSWER_BYTES=max(len(line.encode()) for line in lines[1:-10]) + 10):
            lines[-2] = lines[-2].replace('"language"', f'"padding": "{"x" * 5000}", "language"')
            self.assertEqual(self.assert_same_outcome(lines).status, "rejected")

    def test_it_cuts_the_file_at_line_ends(self):
        lines = answer_lines(self.questions)
        run = self.ingest(lines, label="bot-3", parts=True)
        content = Path(run.file_path).read_bytes()
        bounds = runs._part_bounds(run.file_path, len(content), 3)
        self.assertEqual((bounds[0][0], bounds[-1][1]), (0, len(content)))
        for (_, end), (start, _) in itertools.pairwise(bounds):
            self.assertEqual(end, start)
            self.assertEqual(content[start - 1 : start], b"\n")

    def test_a_part_whose_process_stops_leaves_the_file_to_one_pass(self):
        lines = answer_lines(self.questions)
        with mock.patch.object(runs, "_PART_SCRIPT", "import sys; sys.exit(3)"):
            run = self.assert_same_outcome(lines)
        self.assertEqual((run.status, run.answer_count), ("stored", QUESTIONS * REPETITIONS))
