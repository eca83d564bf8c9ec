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


@pytest.mark.django_db(transaction=True)
def test_the_demo_states_its_clocks_and_one_run_called_as_a_channel_shows_its_overhead(client):
    call_command("demo", answers=60, stdout=StringIO())
    clocks = {
        run.assistant_version.label: (run.clock_skew_ms, run.clock_precision_ms, run.reply_policy)
        for run in Run.objects.filter(assistant_version__label__startswith="assistant-demo-")
    }
    assert clocks == {
        "assistant-demo-2.0": (12.0, 1.0, "direct"),
        "assistant-demo-2.1": (-8.0, 1.0, "channel"),
        "assistant-demo-2.2": (12.0, 1.0, "direct"),
    }
    channel = Run.objects.get(assistant_version__label="assistant-demo-2.1")
    summary = Scoring.objects.get(run=channel).timing["all"]
    # Every delivered answer logged its startup and, called as a channel's
    # agent, its three kinds of overhead.
    assert summary["events"]["startup_s"]["missing"] == 0
    assert {kind: figure["n"] for kind, figure in summary["overhead"]["by_kind"].items()} == {
        "card_assembly": summary["delivered"],
        "channel_detection": summary["delivered"],
        "link_resolution": summary["delivered"],
    }
    direct = Scoring.objects.get(run__assistant_version__label="assistant-demo-2.0").timing["all"]
    assert "overhead" not in direct
    assert client.login(username="lead", password="review-demo")
    page = client.get(channel.get_absolute_url()).content.decode()
    assert '<p class="reply-policy">reply policy: channel</p>' in page
    assert '<table class="grid timing-overhead">' in page
    assert "Exclude channel overhead from E2E" in page
