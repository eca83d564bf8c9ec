"""The demo's run of three attempts per question, as its run page shows
each question's median time (spec 004: with repeats, each question's median)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from reviewapp.models import Run, Scoring
from reviewapp.scorings.selectors import question_times


# Committed as it goes, as the demo command runs on a real database.
@pytest.mark.django_db(transaction=True)
def test_it_shows_the_demo_runs_question_medians_over_three_attempts(client):
    call_command("demo", answers=60, stdout=StringIO())
    run = Run.objects.get(assistant_version__label="assistant-demo-2.2")
    scoring = Scoring.objects.get(run=run)
    assert (run.repetitions, scoring.status) == (3, Scoring.Status.DONE)
    rows = question_times(scoring)["timestamps"]
    stored = scoring.timing["all"]["e2e"]["by_source"]["timestamps"]
    # Every tuning question asked, each with its three attempts; the page's
    # medians are the ones the stored summary of medians was made of.
    assert len(rows) == stored["question_medians"]["n"] + stored["questions_without_sample"]
    assert {row["attempts"] for row in rows} == {3}
    medians = [row["median_s"] for row in rows if row["median_s"] is not None]
    assert medians == sorted(medians, reverse=True)
    assert (medians[0], medians[-1]) == (stored["question_medians"]["max"], stored["question_medians"]["min"])

    assert client.login(username="lead", password="review-demo")
    page = client.get(run.get_absolute_url()).content.decode()
    assert "Each question's median time" in page
    slowest = rows[0]
    assert (
        f'<tr><th scope="row">{slowest["question_id"]}</th><td class="num">{slowest["median_s"]:.2f}</td>'
        f'<td class="num">{slowest["samples"]} of 3</td></tr>'
    ) in page
    assert reverse("export-question-times", args=[run.id, scoring.id]) in page
    # A run made once shows no per-question medians: each would be its one time.
    once = Run.objects.get(assistant_version__label="assistant-demo-2.1")
    assert "Each question's median time" not in client.get(once.get_absolute_url()).content.decode()
