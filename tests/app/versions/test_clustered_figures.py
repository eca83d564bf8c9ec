"""Issue 24, point 1: a run asking each question three times gets, on every
surface (the library's CLI, the API, exports, dashboard, compare and gate),
the same figure with its interval clustered by question and its effective n."""

import json
import pathlib
import subprocess
import sys
import tempfile

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviewapp.models import ApiToken, Run, Score
from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from reviewapp.scorings.selectors import scores_as_dict
from scoring import synthetic
from scoring.logfile import normalise_question
from tests.helpers import BaseTestCase, make_user

SET = "clu-1"
QUESTIONS = 60


def run_text(questions, *, assistant: str, seed: int, repetitions: int = 3, set_version: str = SET) -> str:
    rows = synthetic.generate_run(
        question_set=questions, answers=len(questions), seed=seed, repetitions=repetitions
    )
    header = {"assistant_version": assistant, "set_version": set_version, "repetitions": repetitions}
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in [header, *rows]) + "\n"


class ClusteredFiguresTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.questions = synthetic.generate_question_set(questions=QUESTIONS, seed=21, set_version=SET)
        # No sealed part: the app's figures are the tuning part's, the CLI's the whole run's.
        for question in cls.questions:
            question["split"] = "tuning"
        set_version_create(version=SET, questions=[normalise_question(q) for q in cls.questions])
        cls.texts = {}
        for assistant, seed in (("bot-1.0", 22), ("bot-2.0", 23)):
            cls.texts[assistant] = run_text(cls.questions, assistant=assistant, seed=seed)
            upload = SimpleUploadedFile(
                f"answers_run_{assistant}_set-{SET}.jsonl", cls.texts[assistant].encode()
            )
            with cls.captureOnCommitCallbacks(execute=True):
                received = run_receive(upload=upload)
            assert Run.objects.get(id=received.run.id).status == Run.Status.STORED
        cls.run_obj = Run.objects.get(assistant_version__label="bot-2.0")
        cls.scoring = cls.run_obj.scorings.get()

    def library_figures(self, tmp_path) -> dict:
        run_file = tmp_path / "run.jsonl"
        run_file.write_text(self.texts["bot-2.0"], encoding="utf-8")
        set_file = tmp_path / f"questions_set-{SET}.jsonl"
        synthetic.write_jsonl(set_file, self.questions, header={"set_version": SET})
        out = subprocess.run(
            [sys.executable, "-m", "scoring", str(run_file), "--questions", str(set_file), "--json"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)["slices"]

    def test_every_surface_shows_the_librarys_clustered_figure(self):
        with tempfile.TemporaryDirectory() as folder:
            library = self.library_figures(pathlib.Path(folder))["all"]["numeric_accuracy"]
        # Three attempts of each question expecting an answer are worth fewer
        # draws than they count, and more than the questions alone.
        questions = library["n"] // 3
        self.assertEqual((library["n"], library["clusters"]), (3 * questions, questions))
        self.assertLess(library["effective_n"], library["n"])
        self.assertGreater(library["effective_n"], questions)
        self.assertLess(library["low"], library["unclustered"]["low"])
        figure = {name: library[name] for name in ("k", "n", "low", "high", "effective_n", "clusters")}

        def same(shown: dict) -> dict:
            # The CLI rounds its shares to six places.
            return {
                name: round(value, 6) if name in ("low", "high") else value for name, value in shown.items()
            }

        _, key = ApiToken.issue(user=make_user("pipeline"), name="ci")
        auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        api = self.client.get(f"/api/runs/{self.run_obj.id}", **auth).json()
        shown = api["scorings"][0]["scores"]["all"]["numeric_accuracy"]
        self.assertEqual(same({name: shown[name] for name in figure}), figure)

        self.client.force_login(self.manager)
        export = self.client.get(
            reverse("export-scores", args=[self.run_obj.id, self.scoring.id, "json"])
        ).json()
        exported = export["slices"]["all"]["numeric_accuracy"]
        self.assertEqual(same({name: exported[name] for name in figure}), figure)
        rows = self.client.get(
            reverse("export-scores", args=[self.run_obj.id, self.scoring.id, "csv"])
        ).content.decode()
        line = next(row for row in rows.splitlines() if ",all,numeric_accuracy," in row).split(",")
        self.assertEqual(
            (int(line[5]), int(line[6]), float(line[7]), round(float(line[9]), 6), round(float(line[10]), 6)),
            (figure["k"], figure["n"], figure["effective_n"], figure["low"], figure["high"]),
        )

        # The tables give the effective n on a line of its own, to fit 1366 px.
        counted = f'<span class="k-n">{figure["k"]}/{figure["n"]}</span>'
        effective = f'<span class="ci effective-n">effective n {figure["effective_n"]:.0f}</span>'
        dashboard = self.client.get(reverse("version-dashboard", args=["bot-2.0"]), {"set": SET})
        self.assertContains(dashboard, counted, html=True)
        self.assertContains(dashboard, effective, html=True)
        self.assertContains(dashboard, f"[{figure['low'] * 100:.1f}–{figure['high'] * 100:.1f}]")
        run_page = self.client.get(reverse("run-detail", args=[self.run_obj.id]))
        self.assertContains(run_page, counted, html=True)
        self.assertContains(run_page, effective, html=True)

        compare = self.client.get(
            reverse("version-compare"), {"baseline": "bot-1.0", "candidate": "bot-2.0", "set": SET}
        )
        candidate_all = next(c for c in compare.context["comparisons"] if c.measure == "numeric_accuracy")
        own = candidate_all.candidate_all
        self.assertEqual(
            same({"k": own.k, "n": own.n, "low": own.low, "high": own.high}),
            {name: figure[name] for name in ("k", "n", "low", "high")},
        )
        self.assertEqual((own.effective_n, own.clusters), (figure["effective_n"], figure["clusters"]))

        # A floor inside the candidate's interval is "not shown", quoting the same interval.
        floor = (figure["low"] + figure["high"]) / 2
        gate = self.client.get(
            "/api/gate",
            {
                "baseline": "bot-1.0",
                "candidate": "bot-2.0",
                "set_version": SET,
                "measure": "numeric_accuracy",
                "floor": f"numeric_accuracy={floor:.4f}",
            },
            **auth,
        ).json()
        reasons = gate["measures"]["numeric_accuracy"]["reasons"]
        self.assertIn(
            f"lies inside the candidate's interval ({figure['low']:.1%} to {figure['high']:.1%})",
            " ".join(reasons),
        )

    def test_the_versions_chart_shows_the_clustered_count(self):
        self.client.force_login(self.manager)
        page = self.client.get(reverse("version-list"), {"set": SET})
        figure = self.client.get(
            reverse("export-scores", args=[self.run_obj.id, self.scoring.id, "json"])
        ).json()["slices"]["all"]["numeric_accuracy"]
        self.assertContains(
            page, f"({figure['k']}/{figure['n']}, effective n {figure['effective_n']:.0f})</text>"
        )

    def test_scores_stored_before_cluster_sums_were_kept_get_them_recounted(self):
        before = scores_as_dict(self.scoring)
        self.assertIsNotNone(before["all"]["numeric_accuracy"]["effective_n"])
        Score.objects.filter(scoring=self.scoring).update(clusters=None)
        self.assertEqual(scores_as_dict(self.scoring), before)


class NamedClusterTests(BaseTestCase):
    def test_questions_sharing_a_passage_are_one_cluster_of_every_figure(self):
        questions = synthetic.generate_question_set(questions=40, seed=31, set_version="pass-1")
        for position, question in enumerate(questions):
            question["split"] = "tuning"
            question["cluster"] = f"passage-{position // 4}"  # ten passages of four questions
        set_version_create(version="pass-1", questions=[normalise_question(q) for q in questions])
        text = run_text(questions, assistant="bot-3.0", seed=32, repetitions=1, set_version="pass-1")
        upload = SimpleUploadedFile("answers_run_bot-3.0_set-pass-1.jsonl", text.encode())
        with self.captureOnCommitCallbacks(execute=True):
            received = run_receive(upload=upload)
        scoring = Run.objects.get(id=received.run.id).scorings.get()
        stored = Score.objects.get(scoring=scoring, slice="all", measure="answer_rate")
        self.assertEqual(
            stored.clusters["clusters"],
            len({q["cluster"] for q in questions if q["expected_behaviour"] == "answer"}),
        )
        # The library, given the same set, makes the same sums.
        with tempfile.TemporaryDirectory() as folder:
            run_file = pathlib.Path(folder) / "run.jsonl"
            run_file.write_text(text, encoding="utf-8")
            set_file = pathlib.Path(folder) / "questions_set-pass-1.jsonl"
            synthetic.write_jsonl(set_file, questions, header={"set_version": "pass-1"})
            out = subprocess.run(
                [sys.executable, "-m", "scoring", str(run_file), "--questions", str(set_file), "--json"],
                capture_output=True,
                text=True,
            )
        self.assertEqual(out.returncode, 0, out.stderr)
        library = json.loads(out.stdout)["slices"]["all"]
        shown = scores_as_dict(scoring)["all"]
        # Generated answers hardly cluster; a measure that never fails does
        # (with no failure it falls back to n²/Σn², what clusters alike within are worth).
        self.assertTrue(any(figure["effective_n"] is not None for figure in shown.values()))
        for measure, figure in library.items():
            self.assertEqual(
                (shown[measure]["effective_n"], shown[measure]["clusters"]),
                (figure.get("effective_n"), figure.get("clusters")),
                measure,
            )
