"""A manager opens a version's dashboard and a run in headless Chromium: the chart, and tables that fit 1366 px."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from reviewapp.runs.services.question_sets import set_version_create
from reviewapp.runs.services.runs import run_receive
from scoring import synthetic
from scoring.logfile import normalise_question
from tests.fixtures import load_generated_run
from tests.helpers import browser_log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_manager_opens_a_dashboard_and_sees_the_chart(live_server, browser):
    load_generated_run(answers=60, assistant="bot-3.1", version="dash-1")
    make_user("manager")
    page = browser_log_in(browser, live_server, "manager")
    page.goto(f"{live_server.url}/versions/bot-3.1/")
    chart = page.locator("svg.measure-chart").first
    chart.wait_for()
    assert chart.is_visible()
    assert page.locator("svg.measure-chart circle").count() == 6  # one version, six measures
    assert "numeric accuracy" in chart.text_content()
    assert page.locator("table.scores-table .ci").count() >= 6
    assert "Upload a run" not in page.locator("header").inner_text()  # managers read, never write


def test_clustered_figures_and_timing_fit_a_laptop_screen(live_server, browser):
    # A question asked three times gives every rate an effective n, and the
    # timing table's widest cells: the run page was 1385 px wide at 1366
    # with both on one line each (issue 24).
    questions = synthetic.generate_question_set(questions=60, seed=13, set_version="wide-1")
    set_version_create(version="wide-1", questions=[normalise_question(q) for q in questions])
    rows = synthetic.generate_run(
        question_set=questions, answers=60, seed=14, repetitions=3, timeout_share=0.03
    )
    header = {"assistant_version": "bot-wide", "set_version": "wide-1", "repetitions": 3, "timeout_s": 600}
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in [header, *rows])
    with TestCase.captureOnCommitCallbacks(execute=True):
        run = run_receive(upload=SimpleUploadedFile("wide.jsonl", text.encode())).run
    make_user("manager")
    page = browser_log_in(browser, live_server, "manager")
    for path in (f"/runs/{run.id}/", "/versions/bot-wide/"):
        page.goto(f"{live_server.url}{path}")
        assert page.locator(".effective-n").count() >= 6, path
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366, path
    page.goto(f"{live_server.url}/runs/{run.id}/")
    assert page.locator("table.timing-table").is_visible()
