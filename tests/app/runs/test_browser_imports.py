"""A lead maps a CSV and a Ragas file in headless Chromium: the mapping page fits 1366 px."""

import os
from pathlib import Path

import pytest

from tests.helpers import browser_log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = Path(__file__).resolve().parents[3] / "reviewapp" / "demo" / "imports"
CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus"


@pytest.mark.parametrize(
    "name",
    [
        EXAMPLES / "answers_example.csv",
        EXAMPLES / "ragas_example.jsonl",
        # Multiple choice with its options in the question, and lm-eval's samples.
        CORPUS / "inspect" / "inspect_flow-gpqa-diamond.eval",
        CORPUS / "lm_eval" / "errorbars-arc" / "samples_arc_easy_2026-09-24T03-05-32.831346.jsonl",
    ],
    ids=lambda path: path.name,
)
def test_the_mapping_page_fits_a_laptop_screen(live_server, browser, name):
    # With the examples' long column names in every select and the first
    # answers beside them, the page was 1,636 px wide at 1366 (issue 25).
    make_user("lead")
    page = browser_log_in(browser, live_server, "lead")
    page.goto(f"{live_server.url}/runs/import/")
    page.set_input_files("#id_file", str(name))
    with page.expect_navigation():
        page.click("form.upload-form button[type=submit]")
    page.locator("fieldset.mapping select").first.wait_for()
    if name.suffix == ".csv":
        # Mapped, the preview holds the file's long answers and passages.
        for field, column in {
            "question_id": "ID",
            "question": "Question",
            "answer": "Bot answer",
            "retrieved_contexts": "Sources",
        }.items():
            page.select_option(f"#id_map_{field}", column)
        page.fill("#id_assistant_version", "bot-csv-1")
        page.fill("#id_set_version", "csv-1")
        with page.expect_navigation():
            page.click("button[value=preview]")
        assert page.locator("table.import-lines tbody tr").count() == 5
    page.click("details.raw-rows summary")
    if folder := os.environ.get("SCREENSHOTS"):
        page.screenshot(path=str(Path(folder) / f"mapping-{name.name}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    # Every select is whole on the screen, not cut off at the right.
    rights = page.evaluate(
        "[...document.querySelectorAll('fieldset.mapping select')].map(s => s.getBoundingClientRect().right)"
    )
    assert rights and max(rights) <= 1366
