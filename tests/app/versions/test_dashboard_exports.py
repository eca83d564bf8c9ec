"""The version dashboard's CSV and JSON give what the dashboard shows
(issue 25, point 4): the automatic measures and the review figures, each
with k, n, effective n, rate and interval, labelled; not the latest run's
raw scores."""

import csv
import io

from django.urls import reverse

from reviewapp.review.services.review import rubric_default
from reviewapp.review.services.samples import Frame, sample_draw
from reviewapp.scorings.selectors import pooled_table
from reviewapp.versions.records import pooled_counts, version_record
from tests.app.versions.test_review_samples import decide
from tests.fixtures import load_generated_run
from tests.helpers import BaseTestCase


class DashboardExportTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.logged_run = load_generated_run(answers=150, assistant="bot-1.0")
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=40, seed=31, rubric_version=rubric_default(), name="read"
        )
        decide(cls.sample, lead=cls.lead, count=30)

    def setUp(self):
        self.client.force_login(self.manager)
        self.query = {"set": self.logged_run.set_version.version}

    def export(self, fmt: str, **query):
        return self.client.get(reverse("version-export", args=["bot-1.0", fmt]), {**self.query, **query})

    def shown(self) -> dict:
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]), self.query)
        return page.context

    def test_the_dashboard_links_its_own_figures(self):
        page = self.client.get(reverse("version-dashboard", args=["bot-1.0"]), self.query)
        for fmt in ("csv", "json"):
            url = reverse("version-export", args=["bot-1.0", fmt])
            self.assertContains(page, f'href="{url}?set={self.query["set"]}"')
        self.assertNotContains(page, "/scores.csv")

    def test_json_gives_each_figure_as_numbers(self):
        data = self.export("json").json()
        context = self.shown()
        self.assertEqual(data["samples"], [{"id": self.sample.id, "name": "read", "purpose": "review",
                                            "counted": True, "items": 40}])  # fmt: skip
        rows = {(row["section"], row["slice"], row["figure"], row["basis"]): row for row in data["figures"]}
        record = version_record(self.logged_run.assistant_version, self.logged_run.set_version)
        table = pooled_table(pooled_counts(record))
        automatic = [(row.slice, cell) for row in table for cell in row.cells if cell.rate]
        self.assertEqual(
            len([r for r in data["figures"] if r["section"] == "automatic measures"]), len(automatic)
        )
        for slice_name, cell in automatic:
            row = next(
                r for key, r in rows.items()
                if key[0] == "automatic measures" and key[1] == slice_name and r["measure"] == cell.measure
            )  # fmt: skip
            figure = cell.rate
            self.assertEqual(
                (row["k"], row["n"], row["rate"], row["low"], row["high"]),
                (figure.k, figure.n, figure.value, figure.low, figure.high),
            )
            self.assertEqual(row["effective_n"], figure.effective_n if figure.clustered else figure.n)
        review = context["review"]
        self.assertTrue(review["stratified"])
        resolved = next(g for g in review["grades"] if g["grade"] == "resolved")
        weighted = rows[("review", "all", "outcome: resolved", "weighted by strata")]
        self.assertEqual(
            (weighted["k"], weighted["n"], weighted["rate"], weighted["low"], weighted["high"]),
            (resolved["k"], resolved["n"], resolved["weighted"].value, resolved["weighted"].low,
             resolved["weighted"].high),
        )  # fmt: skip
        self.assertEqual(weighted["effective_n"], resolved["weighted"].effective_n)
        unweighted = rows[("review", "all", "outcome: resolved", "sample, unweighted")]
        self.assertEqual(
            (unweighted["k"], unweighted["n"], unweighted["effective_n"], unweighted["rate"]),
            (resolved["k"], resolved["n"], resolved["n"], resolved["rate"].value),
        )
        coverage = rows[("review", "all", "graded coverage", "sample, unweighted")]
        self.assertEqual((coverage["k"], coverage["n"]), (review["graded"], review["planned"]))
        passing = rows[("review", "all", "passes every rubric question", "weighted by strata")]
        self.assertEqual(passing["rate"], review["passes_rubric"]["weighted"].value)

    def test_csv_rounds_shares_to_four_decimals_and_labels_every_row(self):
        response = self.export("csv")
        self.assertEqual(response["Content-Type"], "text/csv; charset=utf-8")
        self.assertIn('filename="figures-bot-1.0-', response["Content-Disposition"])
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        json_rows = self.export("json").json()["figures"]
        self.assertEqual(len(rows), len(json_rows))
        for row, figure in zip(rows, json_rows, strict=True):
            self.assertEqual(
                (row["section"], row["figure"], row["basis"]),
                (figure["section"], figure["figure"], figure["basis"]),
            )
            for name in ("rate", "low", "high"):
                self.assertRegex(row[name], r"^[01]\.\d{4}$")
                self.assertEqual(row[name], f"{figure[name]:.4f}")
            effective = figure["effective_n"]
            self.assertEqual(
                row["effective_n"],
                str(int(effective)) if float(effective).is_integer() else f"{effective:.1f}",
            )
            self.assertEqual(row["n"], str(figure["n"]))
        self.assertNotRegex(response.content.decode(), r"\d\.\d{6}")

    def test_it_exports_the_samples_the_manager_chose(self):
        data = self.export("json", samples="chosen").json()
        self.assertEqual([s["counted"] for s in data["samples"]], [False])
        self.assertFalse([r for r in data["figures"] if r["section"] == "review"])

    def test_an_unknown_format_is_not_found(self):
        self.assertEqual(self.export("xlsx").status_code, 404)
        self.assertEqual(
            self.client.post(reverse("version-export", args=["bot-1.0", "csv"])).status_code, 405
        )
