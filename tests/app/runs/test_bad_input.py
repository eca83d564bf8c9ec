"""Bad input to the newer entry points is refused with a message naming what
is wrong, never a server error, and nothing is stored half-way."""

from django.contrib.messages import get_messages
from django.urls import reverse

from reviewapp.models import Run, Sample
from reviewapp.review.services.review import rubric_default
from tests.fixtures import load_generated_run
from tests.helpers import BaseTestCase


class BadInputTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.run_a = load_generated_run(answers=40, seed=5, assistant="bot-1.0", version="gen-1")
        cls.run_b = load_generated_run(answers=40, seed=7, assistant="bot-2.0", version="gen-2")

    def setUp(self):
        self.client.force_login(self.lead)

    def flashed(self, response) -> list[str]:
        return [str(m) for m in get_messages(response.wsgi_request)]

    def test_a_seed_beyond_64_bits_is_a_form_error_not_a_server_error(self):
        for seed in (2**63, -(2**63) - 1, 10**30):
            response = self.client.post(
                reverse("sample-new"),
                {
                    "run": self.run_a.id,
                    "size": 5,
                    "allocation": "proportional",
                    "min_per_stratum": 1,
                    "rubric_version": rubric_default().id,
                    "seed": seed,
                },
            )
            self.assertEqual(response.status_code, 400, seed)
            self.assertIn("seed", response.context["form"].errors)
        self.assertFalse(Sample.objects.exists())

    def test_the_dashboard_says_when_the_chosen_run_is_not_one_of_the_versions(self):
        url = reverse("version-dashboard", args=["bot-1.0"])
        for value, named in (
            (str(self.run_b.id), f"run #{self.run_b.id}"),
            ("999999", "run #999999"),
            ("abc", "run 'abc'"),
            ("\u00b2", "run '\u00b2'"),  # a digit to str.isdigit, not to int()
        ):
            response = self.client.get(url, {"set": "gen-1", "run": value})
            self.assertEqual(response.status_code, 200)
            self.assertIsNone(response.context["record"].chosen)
            self.assertEqual(
                self.flashed(response),
                [f"{named} is not a stored run of bot-1.0 on set gen-1: every run is shown."],
            )
        chosen = self.client.get(url, {"set": "gen-1", "run": self.run_a.id})
        self.assertEqual(chosen.context["record"].chosen, self.run_a)
        self.assertEqual(self.flashed(chosen), [])

    def test_an_over_long_exclusion_reason_is_named_as_such(self):
        url = reverse("run-exclude", args=[self.run_a.id])
        response = self.client.post(url, {"reason": "x" * 1001})
        self.assertRedirects(
            response, reverse("run-detail", args=[self.run_a.id]), fetch_redirect_response=False
        )
        self.assertEqual(
            self.flashed(response),
            ["The run still counts: reason: Ensure this value has at most 1000 characters (it has 1001)."],
        )
        self.assertEqual(Run.objects.get(id=self.run_a.id).excluded_reason, "")
        blank = self.client.post(url, {"reason": "  "})
        self.assertEqual(
            self.flashed(blank)[-1],
            "say why the run is left out: the reason is shown beside it on the dashboard",
        )

    def test_include_counts_the_run_again_only_when_asked_with_1(self):
        url = reverse("run-exclude", args=[self.run_a.id])
        self.client.post(url, {"reason": "the log was cut short"})
        self.client.post(url, {"include": "0"})
        self.assertEqual(Run.objects.get(id=self.run_a.id).excluded_reason, "the log was cut short")
        self.client.post(url, {"include": "1"})
        self.assertEqual(Run.objects.get(id=self.run_a.id).excluded_reason, "")
