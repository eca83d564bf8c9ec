"""A reader grades pairs with the keyboard alone at 1366x768, with long
answers and four evidence records each, and a lead reads the results, in
headless Chromium against the live app. With PAIRED_SHOTS set to a folder,
the screens are saved there as PNG files."""

import json
import os
import random
import uuid
from pathlib import Path

import pytest

from reviewapp.models import Answer
from reviewapp.paired.models import PairedAssignment, PairedJudgement
from reviewapp.paired.services import PairedInput, paired_assign, paired_draw, paired_judgement_submit
from tests.fixtures import load_generated_run, twin
from tests.helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH, HEIGHT = 1366, 768
EXTRA_RECORD = {
    "label": "Population, total",
    "values": [13157.0, 13200.5],
    "period": "2020",
    "unit": "people",
    "caveats": ["estimate revised in 2023"],
}


def four_records_and_long_answers(run, *, paragraphs: int) -> None:
    """Give every answer of ``run`` four evidence records and a long text."""
    for answer in run.answers.all():
        record = answer.record
        records = list(record.get("retrieved_records") or [])
        while len(records) < 4:
            records.append({"id": f"POP_TOTAL_{len(records)}", **EXTRA_RECORD})
        record["retrieved_records"] = records
        record["retrieved_ids"] = [r["id"] for r in records]
        text = record.get("answer") or ""
        record["answer"] = "\n\n".join([text] + [f"{text} (detail {i})" for i in range(1, paragraphs)])
        Answer.objects.filter(id=answer.id).update(raw=json.dumps(record))


def shot(page, name: str, *, full_page: bool = False) -> None:
    folder = os.environ.get("PAIRED_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=full_page)


def log_in(browser, url: str, username: str):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(f"{url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    return page


def assert_in_view(page, selector: str) -> None:
    """Each element matching ``selector`` lies within the window, and nothing in it is cut off at the side."""
    for element in page.locator(selector).all():
        box = element.bounding_box()
        assert box is not None, selector
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (selector, box)
        assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, (selector, box)
        assert element.evaluate("e => e.scrollWidth <= e.clientWidth"), (selector, "overflows at the side")


def test_a_reader_grades_pairs_with_the_keyboard_and_a_lead_reads_the_results(live_server, browser):
    run_a = load_generated_run(answers=60, assistant="keybot-1.0", version="kb-1")
    run_b = twin(run_a, "keybot-2.0", change=lambda text: "In short: " + text)
    four_records_and_long_answers(run_a, paragraphs=6)
    four_records_and_long_answers(run_b, paragraphs=9)
    reader = make_user("reader", "reviewer")
    make_user("lead")
    sample = paired_draw(run_a=run_a, run_b=run_b, size=3, seed=4, readers_per_item=1, repeat_share=0)
    paired_assign(paired_sample=sample, reviewers=[reader])

    page = log_in(browser, live_server.url, "reader")
    page.goto(f"{live_server.url}/pairs/{sample.id}/")
    page.wait_for_selector("form.pair-form fieldset.pair-grade.current")
    shot(page, "reader-pair")
    # Everything a reader acts on is in view without scrolling the page.
    assert_in_view(page, ".pair-answer")
    assert_in_view(page, "form.pair-form fieldset.question")
    assert_in_view(page, "button.submit")
    assert page.evaluate("document.documentElement.scrollHeight") <= HEIGHT

    def next_pair(alias: str) -> None:
        page.wait_for_function(
            "alias => document.querySelector('code.alias').textContent !== alias", arg=alias
        )

    # Pair 1: both resolved, answer 1 better: four keys.
    aliases = [page.locator("code.alias").inner_text()]
    for key in ("1", "1", "ArrowLeft", "Enter"):
        page.keyboard.press(key)
    next_pair(aliases[-1])
    assert page.locator(".saved").is_visible()

    # Pair 2: answer 1 partially resolved (the note takes the keys), answer 2 resolved, equal.
    aliases.append(page.locator("code.alias").inner_text())
    page.keyboard.press("2")
    page.keyboard.type("leaves out the period")
    page.keyboard.press("Escape")
    for key in ("1", "=", "Enter"):
        page.keyboard.press(key)
    next_pair(aliases[-1])

    # Pair 3: submitted without saying which is better: the error shows by its field, in view.
    aliases.append(page.locator("code.alias").inner_text())
    page.keyboard.press("3")
    page.keyboard.type("the core figure is wrong")
    page.keyboard.press("Escape")
    page.keyboard.press("4")
    page.keyboard.type("only a plan")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector(".field-error")
    shot(page, "reader-pair-errors")
    assert_in_view(page, ".field-error")
    assert_in_view(page, "button.submit")
    # Four records under a long answer: a link in the answer's heading brings them into view.
    page.locator(".pair-answer[data-place='2'] a.jump").click()
    shot(page, "reader-pair-evidence")
    assert_in_view(page, ".pair-answer[data-place='2'] article.record >> nth=0")
    values = page.locator(".pair-answer[data-place='2'] .value").all_inner_texts()
    # As the record writes them, in the question's language (13157.0 is "13,157" in English).
    assert {"13,157", "13.157", "13\u202f157"} & set(values), values
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/pairs/?done={sample.id}")

    judgements = {
        j.assignment.alias: j
        for j in PairedJudgement.objects.select_related("assignment").filter(author=reader)
    }
    assert sorted(judgements) == sorted(aliases)
    first, second, third = (judgements[alias] for alias in aliases)
    assert (first.grade_first, first.grade_second, first.better) == ("resolved", "resolved", "1")
    assert (second.grade_first, second.note_first, second.grade_second, second.better) == (
        "partially_resolved",
        "leaves out the period",
        "resolved",
        "equal",
    )
    assert (third.grade_first, third.grade_second, third.note_second, third.better) == (
        "material_error",
        "unresolved",
        "only a plan",
        "2",
    )
    assert len({j.submission_key for j in judgements.values()}) == 3  # one save per Enter

    # The lead's results on a larger comparison, read by two readers with repeats.
    larger = paired_draw(run_a=run_a, run_b=run_b, size=30, seed=8, readers_per_item=2, repeat_share=0.2)
    other = make_user("reader2", "reviewer")
    paired_assign(paired_sample=larger, reviewers=[reader, other])
    rank = {"resolved": 0, "partially_resolved": 1, "unresolved": 2}
    noise = random.Random(1)
    for assignment in PairedAssignment.objects.filter(item__paired_sample=larger).order_by("id"):
        # Each pair's grades come from the pair; now and then a reader differs.
        plan = random.Random(assignment.item_id)
        grade_a, grade_b = plan.choices(list(rank), weights=[6, 2, 1], k=2)
        if noise.random() < 0.15:
            grade_b = "partially_resolved" if grade_b == "resolved" else "resolved"
        better = "equal" if grade_a == grade_b else ("a" if rank[grade_a] < rank[grade_b] else "b")
        first, second = (grade_a, grade_b) if assignment.a_is_first else (grade_b, grade_a)
        a_place = "1" if assignment.a_is_first else "2"
        paired_judgement_submit(
            assignment=assignment,
            author=assignment.reviewer,
            data=PairedInput(
                grade_first=first,
                note_first="a reason",
                grade_second=second,
                note_second="a reason",
                better={"equal": "equal", "a": a_place, "b": "2" if a_place == "1" else "1"}[better],
            ),
            submission_key=uuid.uuid4(),
        )
    lead_page = log_in(browser, live_server.url, "lead")
    lead_page.goto(f"{live_server.url}/paired/{larger.id}/")
    lead_page.wait_for_selector("table.paired-table")
    shot(lead_page, "lead-results")
    shot(lead_page, "lead-results-full", full_page=True)
    assert "keybot-1.0" in lead_page.content()
    assert_in_view(lead_page, ".figures section")
    lead_page.locator("a", has_text="decide →").first.click()
    lead_page.wait_for_selector("form.decision")
    shot(lead_page, "lead-decide")
    assert_in_view(lead_page, "form.decision fieldset")
    assert_in_view(lead_page, "form.decision button")
