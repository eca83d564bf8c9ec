"""A reviewer grades items with the keyboard alone, and a lead decides one,
in headless Chromium against the live app at 1366x768."""

import os
import uuid

import pytest

from reviewapp.models import Adjudication, Judgement
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(transaction=True)

VIEWPORT = {"width": 1366, "height": 768}


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def in_view(page, selector) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"]


def reader_on_review(live_server, browser, run, *, javascript: bool = True):
    """A reader assigned a three-item sample of ``run``, on its review screen:
    (the page, the sample)."""
    reader = make_user("reader", "reviewer")
    sample = sample_draw(frame=Frame(run=run), size=3, seed=5, rubric_version=rubric_default())
    sample_assign(sample=sample, reviewers=[reader])
    page = browser.new_context(viewport=VIEWPORT, java_script_enabled=javascript).new_page()
    log_in(page, live_server, "reader")
    page.goto(f"{live_server.url}/review/{sample.id}/")
    return page, sample


def test_a_reviewer_grades_three_items_with_the_keyboard_alone(live_server, browser):
    run = load_generated_run(answers=40, assistant="hiddenbot-9q7", version="blind-1")
    page, sample = reader_on_review(live_server, browser, run)

    # A resolved item stays eight keys: y for the question, the grade, y for each rubric
    # question, Enter: spec 004's order. Any other grade then asks for its reason once the
    # last question is answered, typed straight away and sent with Enter (issue 25, point 11).
    grades = {"1": "resolved", "2": "partially_resolved", "4": "unresolved"}
    seen_aliases = []
    for number, grade_key in enumerate(grades, start=1):
        page.wait_for_selector("form.rubric-form fieldset.question.current")
        alias = page.locator(".review-bar code.alias").inner_text()
        seen_aliases.append(alias)
        html = page.content()
        for secret in ("hiddenbot", "9q7", "blind-1", f"/runs/{run.id}/", f"run #{run.id}"):
            assert secret not in html, secret
        page.keyboard.press("y")  # addresses the question
        page.keyboard.press(grade_key)
        assert page.locator("[data-grade-output]").inner_text() == grades[grade_key].replace("_", " ")
        assert page.locator("fieldset.question.current").get_attribute("data-key") == "q_series"
        for _ in range(5):  # the five rubric questions; the caveat one may be n/a
            page.keyboard.press("y")
        if grade_key == "1":
            page.keyboard.press("Enter")
        else:
            assert page.evaluate("document.activeElement.name") == "note"
            page.keyboard.type("the caveat is missing")
            page.keyboard.press("Enter")
        if number < 3:
            page.wait_for_function(
                "alias => document.querySelector('.review-bar code.alias').textContent !== alias", arg=alias
            )
            saved = page.locator(".review-bar .saved")
            assert saved.inner_text().startswith(f"✓ Saved item {number} ({alias})")
            assert in_view(page, ".review-bar .saved")
    page.wait_for_url(f"{live_server.url}/review/?done={sample.id}")

    judgements = Judgement.objects.filter(assignment__reviewer__username="reader").select_related(
        "assignment"
    )
    assert sorted(j.assignment.alias for j in judgements) == sorted(seen_aliases)
    assert sorted(j.grade for j in judgements) == sorted(grades.values())
    assert all(j.addresses_question and set(j.rubric_answers.values()) == {"yes"} for j in judgements)
    assert len({j.submission_key for j in judgements}) == 3  # one save per Enter


def test_a_material_error_takes_the_reader_to_its_claim_and_errors_show_beside_their_fields(
    live_server, browser
):
    run = load_generated_run(answers=20, assistant="hiddenbot-9q7", version="blind-1")
    page, _ = reader_on_review(live_server, browser, run)
    page.wait_for_selector("form.rubric-form fieldset.question.current")
    page.keyboard.press("y")
    page.keyboard.press("3")
    assert page.evaluate("document.activeElement.name") == "error_claim"
    assert page.locator("[data-grade-output]").inner_text() == "material error"
    page.keyboard.type("says 35 per 1,000")
    page.keyboard.press("Escape")
    for _ in range(4):
        page.keyboard.press("y")  # the fifth rubric question is left open
    page.keyboard.press("Enter")
    page.wait_for_selector(".error-summary")
    # Every error at once, each beside its field, and the grade and the button still in view.
    assert page.locator(".field-error").count() == 4
    assert page.locator("#error-q_unsupported_claim").is_visible()
    assert page.locator("#error-error_kind").is_visible()
    assert in_view(page, ".derived")
    assert in_view(page, "button.submit")
    assert page.locator("textarea[name=error_claim]").input_value() == "says 35 per 1,000"
    assert Judgement.objects.count() == 0
    # The jump list holds the reader's items.
    page.keyboard.press("Escape")
    page.keyboard.press("l")
    assert page.locator(".jump-list li").count() == 3


def test_a_lead_decides_with_the_keyboard_and_gets_the_next_item(live_server, browser):
    run = load_generated_run(answers=20, assistant="hiddenbot-9q7", version="blind-1")
    make_user("lead")
    reader = make_user("reader", "reviewer")
    sample = sample_draw(frame=Frame(run=run), size=3, seed=5, rubric_version=rubric_default())
    sample_assign(sample=sample, reviewers=[reader])
    items = list(sample.items.order_by("position"))
    for assignment in [item.assignments.get() for item in items]:
        judgement_submit(
            assignment=assignment,
            author=reader,
            data=JudgementInput(
                addresses_question=True,
                rubric_answers={
                    k: "yes" for k in ("series", "period", "unit", "caveat", "unsupported_claim")
                },
                material_error="no",
                correctness="correct",
                fulfilment="partial",
                note="no caveat",
            ),
            submission_key=uuid.uuid4(),
        )
    # The queue is oldest first: the items in the order they were judged.
    first, second = items[0], items[1]

    page = browser.new_page(viewport=VIEWPORT)
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/lead/items/{first.id}/")
    assert in_view(page, "form.decision button.submit")
    assert in_view(page, "form.decision .derived")
    # The readers agree: everything is filled in but the reason.
    assert page.locator("[data-grade-output]").inner_text() == "partially resolved"
    page.keyboard.press("1")
    assert page.locator("[data-grade-output]").inner_text() == "resolved"
    # A decision always needs its reason: the keys lead there; Escape leaves it.
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.press("Escape")
    page.keyboard.press("2")
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.type("the caveat is missing")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert page.url.endswith(f"/lead/items/{second.id}/")
    assert "Decision recorded on item" in page.content()
    assert Adjudication.objects.get(item=first).grade == "partially_resolved"


def submit_keys(page) -> str:
    """The keys the submit button names, as Playwright presses them."""
    return page.locator("form.rubric-form button.submit kbd").inner_text().replace("Ctrl", "Control")


def test_enter_submits_from_the_reason_box_and_the_button_names_the_keys_that_submit(live_server, browser):
    # Issue 25, point 11: after 2, 3, 4 or p the focus is in a text box, where
    # Enter only added a line while the button read "Submit Enter".
    run = load_generated_run(answers=20, assistant="hiddenbot-9q7", version="blind-1")
    page, _ = reader_on_review(live_server, browser, run)
    page.wait_for_selector("form.rubric-form fieldset.question.current")
    alias = page.locator(".review-bar code.alias").inner_text()
    page.check("input[name=addresses_question][value=yes]")
    for key in ("series", "period", "unit", "caveat"):
        page.check(f"input[name=q_{key}][value=yes]")
    page.check("input[name=q_unsupported_claim][value=no]")
    page.keyboard.press("2")
    assert page.evaluate("document.activeElement.name") == "note"
    assert submit_keys(page) == "Enter"
    page.keyboard.type("the caveat")
    page.keyboard.press("Shift+Enter")  # a new line, not a submit
    page.keyboard.type("is missing")
    assert page.locator("textarea[name=note]").input_value() == "the caveat\nis missing"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "alias => document.querySelector('.review-bar code.alias').textContent !== alias", arg=alias
    )
    judgement = Judgement.objects.get()
    assert (judgement.grade, judgement.note) == ("partially_resolved", "the caveat\nis missing")

    # Wherever the focus is, the keys the button names submit the form.
    page.wait_for_selector("form.rubric-form fieldset.question.current")
    page.keyboard.press("3")
    assert page.evaluate("document.activeElement.name") == "error_claim"

    def focus_jump_list():
        page.keyboard.press("Escape")
        page.keyboard.press("l")

    places = {
        "the claim": lambda: page.focus("textarea[name=error_claim]"),
        "the kind": lambda: page.focus("select[name=error_kind]"),
        "the reason": lambda: page.focus("textarea[name=note]"),
        "a metric": lambda: page.focus("input[name=correctness]:checked"),
        "the page": lambda: page.evaluate("document.activeElement.blur()"),
        "the jump list": focus_jump_list,
    }
    for place, focus in places.items():
        focus()
        keys = submit_keys(page)
        page.evaluate("document.querySelector('#review-screen').dataset.before = 'yes'")
        with page.expect_request(lambda request: request.method == "POST", timeout=3000):
            page.keyboard.press(keys)
        # The refused form comes back in place of the old one, errors shown.
        page.wait_for_function("() => !document.querySelector('#review-screen').dataset.before")
        assert page.locator(".error-summary").is_visible(), place
        assert Judgement.objects.count() == 1, place


def test_the_guide_opens_beside_the_review_and_the_keys_work_again_once_it_closes(live_server, browser):
    run = load_generated_run(answers=20)
    page, _ = reader_on_review(live_server, browser, run)
    page.wait_for_selector("form.rubric-form fieldset.question.current")
    assert in_view(page, ".answer-text") and in_view(page, "button.submit")
    if folder := os.environ.get("SCREENSHOTS"):
        page.screenshot(path=f"{folder}/review-1366x768.png")

    page.keyboard.press("g")
    assert page.locator("dialog#guide").is_visible()
    # A sheet over the right-hand side: the answer stays where it was, in view.
    assert in_view(page, ".answer-text")
    assert page.locator("dialog#guide").bounding_box()["x"] > page.locator(".answer-text").bounding_box()["x"]
    if folder := os.environ.get("SCREENSHOTS"):
        page.screenshot(path=f"{folder}/review-guide-1366x768.png")
    page.keyboard.press("y")  # no key grades while the guide is open
    assert not page.locator("input[name=addresses_question][value=yes]").is_checked()

    page.keyboard.press("Escape")
    assert not page.locator("dialog#guide").is_visible()
    page.keyboard.press("y")
    assert page.locator("input[name=addresses_question][value=yes]").is_checked()
    # The guide link opens the same sheet, without jumping the page to it.
    page.click(".review-links a[data-open=guide]")
    assert page.locator("dialog#guide").is_visible()
    assert not page.url.endswith("#guide")


def test_the_guide_is_reached_without_javascript(live_server, browser):
    run = load_generated_run(answers=20)
    page, _ = reader_on_review(live_server, browser, run, javascript=False)
    assert not page.locator("dialog#guide").is_visible()
    page.click("text=guide")
    assert page.locator("dialog#guide").is_visible()
    assert page.locator("dialog#guide").get_by_text("how do I debug this").is_visible()
    page.context.close()
