"""A reviewer grades three items with the keyboard alone, in headless
Chromium against the live app."""

import pytest

from reviewapp.models import Judgement
from reviewapp.services.review import rubric_default
from reviewapp.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_reviewer_grades_three_items_with_the_keyboard_alone(live_server, browser):
    run = load_generated_run(answers=40, assistant="hiddenbot-9q7", version="blind-1")
    reader = make_user("reader", "reviewer")
    sample = sample_draw(frame=Frame(run=run), size=3, seed=5, rubric_version=rubric_default())
    sample_assign(sample=sample, reviewers=[reader])

    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "reader")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.goto(f"{live_server.url}/review/{sample.id}/")

    grades = {"1": "resolved", "2": "partially_resolved", "4": "unresolved"}
    seen_aliases = []
    for grade_key in grades:
        page.wait_for_selector("form.rubric-form fieldset.question.current")
        alias = page.locator(".review-bar code").inner_text()
        seen_aliases.append(alias)
        html = page.content()
        for secret in ("hiddenbot", "9q7", "blind-1", f"/runs/{run.id}/", f"run #{run.id}"):
            assert secret not in html, secret
        page.keyboard.press("y")  # addresses the question
        for _ in range(5):  # the five rubric questions; the caveat one may be n/a
            page.keyboard.press("y")
        page.keyboard.press(grade_key)
        page.keyboard.press("Enter")
        if len(seen_aliases) < 3:
            page.wait_for_function(
                "alias => document.querySelector('.review-bar code').textContent !== alias", arg=alias
            )
    page.wait_for_url(f"{live_server.url}/review/?done={sample.id}")

    judgements = Judgement.objects.filter(assignment__reviewer=reader).select_related("assignment")
    assert sorted(j.assignment.alias for j in judgements) == sorted(seen_aliases)
    assert sorted(j.grade for j in judgements) == sorted(grades.values())
    assert all(j.addresses_question and set(j.rubric_answers.values()) == {"yes"} for j in judgements)
    assert len({j.submission_key for j in judgements}) == 3  # one save per Enter
