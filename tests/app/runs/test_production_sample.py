"""manage.py production_sample: production questions into a new set version,
drawn by the time they were asked (issue 27 point 10)."""

import json
import shutil
import tempfile
from io import StringIO
from pathlib import Path

from django.core.management import CommandError, call_command
from django.test import TestCase

from reviewapp.models import SetVersion


class ProductionSampleTests(TestCase):
    def frame(self, *records) -> str:
        path = self.tmp / "frame.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
        return str(path)

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_it_stores_the_draw_as_a_new_set_version(self):
        records = [
            {
                "question_id": f"p{i}",
                "language": "en",
                "question": f"q{i}",
                "asked_at": f"2026-11-0{i + 2}T08:00:00Z",
            }
            for i in range(4)
        ]
        out = StringIO()
        call_command(
            "production_sample", self.frame(*records), "--set-version", "prod-2026-11", "--from", "2026-11-01",
            "--to", "2026-11-30", "--size", "2", "--period", "month", "--seed", "5", stdout=out,
        )  # fmt: skip
        made = SetVersion.objects.get(version="prod-2026-11")
        self.assertEqual(made.questions.count(), 2)
        self.assertEqual(set(made.questions.values_list("stratum", flat=True)), {"2026-11"})
        self.assertEqual(
            made.note,
            "sampled from a production frame: 2 of 4 production questions asked from 2026-11-01 to 2026-11-30, "
            "drawn by month of asked_at (seed 5): 2026-11 2 of 4",
        )
        self.assertEqual(out.getvalue(), f"set version prod-2026-11: {made.note}\n")

    def test_it_names_the_line_without_asked_at_and_stores_nothing(self):
        records = [
            {"question_id": "p1", "language": "en", "asked_at": "2026-11-02T08:00:00Z"},
            {"question_id": "p2", "language": "en"},
        ]
        with self.assertRaisesMessage(CommandError, "frame.jsonl: line 2, field asked_at: missing"):
            call_command(
                "production_sample", self.frame(*records), "--set-version", "prod-1", "--from", "2026-11-01",
                "--to", "2026-11-30", "--size", "1", "--seed", "5",
            )  # fmt: skip
        self.assertFalse(SetVersion.objects.exists())
