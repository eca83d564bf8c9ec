"""manage.py production_sample: production questions into a new set version,
drawn by the time they were asked (issue 27 point 10)."""

import json
import shutil
import tempfile
from io import StringIO
from pathlib import Path

from django.core.management import CommandError, call_command
from django.test import TestCase
from django.urls import reverse

from reviewapp.models import SetVersion
from tests.helpers import PASSWORD, jsonl, make_user


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


class ProductionPageTests(TestCase):
    def setUp(self):
        make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        self.url = reverse("set-from-production")

    def post(self, *records, **fields):
        form = {
            "file": jsonl(*records, name="frame.jsonl"),
            "version": "prod-1",
            "start": "2026-11-01",
            "end": "2026-11-30",
            "period": "week",
            "size": "1",
            "seed": "4",
            **fields,
        }
        return self.client.post(self.url, form)

    def test_it_draws_by_week_of_asked_time(self):
        response = self.post(
            {"question_id": "p1", "language": "en", "asked_at": "2026-11-02T08:00:00Z"},
            {"question_id": "p2", "language": "en", "asked_at": "2026-11-03T08:00:00Z"},
            {"question_id": "p3", "language": "en", "asked_at": "2026-12-01T08:00:00Z"},
        )
        self.assertRedirects(response, reverse("set-detail", args=["prod-1"]), fetch_redirect_response=False)
        made = SetVersion.objects.get(version="prod-1")
        self.assertEqual(
            made.note,
            "sampled from a production frame: 1 of 2 production questions asked from 2026-11-01 to 2026-11-30, "
            "drawn by week of asked_at (seed 4): 2026-W45 1 of 2",
        )
        self.assertEqual(made.questions.count(), 1)

    def test_it_names_the_line_and_field_and_stores_nothing(self):
        response = self.post(
            {"question_id": "p1", "language": "en", "asked_at": "2026-11-02T08:00:00Z"},
            {"question_id": "p2", "language": "en", "asked_at": "2026-11-02"},
        )
        self.assertEqual(response.status_code, 400)
        self.assertEqual(
            response.context["errors"],
            [
                "frame.jsonl: line 2, field asked_at: '2026-11-02' has no offset: "
                "write Z or +01:00 so that it names one moment"
            ],
        )
        self.assertFalse(SetVersion.objects.exists())
