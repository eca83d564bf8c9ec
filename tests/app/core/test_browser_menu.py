"""Each role's menu on a 1366 × 768 screen: one line, and "More" opens and
closes from the keyboard (issue 25, point 9). Screenshots go to
$MENU_SCREENSHOTS when it names a folder."""

import os
from pathlib import Path

import pytest

from tests.helpers import browser_log_in, make_user

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ("reviewer", "lead", "manager", "admin")


@pytest.mark.parametrize("role", ROLES)
def test_each_roles_menu_fits_one_line_at_1366(live_server, browser, role):
    make_user(role)
    page = browser_log_in(browser, live_server, role)
    page.goto(f"{live_server.url}/login/")
    tops = page.eval_on_selector_all(
        "header.top nav > a, header.top nav > details > summary",
        "entries => entries.map(e => Math.round(e.getBoundingClientRect().top))",
    )
    assert tops and len(set(tops)) == 1, tops
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    if folder := os.environ.get("MENU_SCREENSHOTS"):
        if page.locator("header.top details.more").count():
            page.click("header.top details.more summary")
        page.screenshot(path=str(Path(folder) / f"menu-{role}.png"))


def test_more_opens_and_closes_from_the_keyboard(live_server, browser):
    make_user("lead")
    page = browser_log_in(browser, live_server, "lead")
    page.goto(f"{live_server.url}/login/")
    summary = page.locator("header.top details.more summary")
    summary.focus()
    page.keyboard.press("Enter")
    assert page.locator("header.top details.more .menu").is_visible()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "My comparisons"
    page.keyboard.press("Escape")
    assert not page.locator("header.top details.more .menu").is_visible()
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
