"""Uploading a new set with a seed seals a stratified third of it
(scoring.split), the same third the CLI draws."""

import json

from django.test import TestCase
from django.urls import reverse

from reviewapp.models import ApiToken, Question, SetVersion
from scoring.split import seal_a_third_of_file
from tests.conftest import SHARED_DATA
from tests.helpers import PASSWORD, example_file, jsonl, make_user

SET_FILE = "questions_set-1.2.jsonl"


def sealed_of(version: str) -> set[str]:
    return set(
        Question.objects.filter(set_version__version=version, split="sealed").values_list(
            "question_id", flat=True
        )
    )


class SealedThirdUploadTests(TestCase):
    def setUp(self):
        self.user = make_user("lead")
        self.client.login(username="lead", password=PASSWORD)
        _, key = ApiToken.issue(user=self.user, name="ci")
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def test_the_upload_form_seals_the_third_the_cli_draws_and_records_the_seed(self):
        response = self.client.post(reverse("set-list"), {"file": example_file(SET_FILE), "seal_seed": "7"})
        self.assertRedirects(response, reverse("set-detail", args=["1.2"]))
        expected = seal_a_third_of_file(SHARED_DATA / SET_FILE, seed=7).sealed
        self.assertEqual(len(expected), 3)
        self.assertEqual(sealed_of("1.2"), set(expected))
        self.assertIn("seed 7", SetVersion.objects.get(version="1.2").note)

    def test_the_api_seals_a_third_and_says_how_many(self):
        response = self.client.post(
            "/api/question-sets", {"file": example_file(SET_FILE), "seal_seed": "7"}, **self.auth
        )
        self.assertEqual(response.status_code, 201)
        self.assertEqual(response.json()["sealed"], 3)
        self.assertEqual(sealed_of("1.2"), set(seal_a_third_of_file(SHARED_DATA / SET_FILE, seed=7).sealed))

    def test_it_refuses_a_seed_for_a_set_that_states_its_splits(self):
        lines = (SHARED_DATA / SET_FILE).read_text().splitlines()
        split = [lines[0], *(json.dumps({**json.loads(line), "split": "tuning"}) for line in lines[1:])]
        response = self.client.post(
            reverse("set-list"), {"file": jsonl(*split, name=SET_FILE), "seal_seed": "7"}
        )
        self.assertContains(response, "question a01 states its split already (tuning)", status_code=400)
        self.assertFalse(SetVersion.objects.exists())

    def test_without_a_seed_nothing_is_sealed(self):
        self.client.post(reverse("set-list"), {"file": example_file(SET_FILE)})
        self.assertEqual(sealed_of("1.2"), set())
