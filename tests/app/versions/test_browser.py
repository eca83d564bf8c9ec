"""A manager opens a version's dashboard in headless Chromium and sees the chart."""

import pytest

from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_manager_opens_a_dashboard_and_sees_the_chart(live_server, browser):
    load_generated_run(answers=60, assistant="bot-3.1", version="dash-1")
    make_user("manager")
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "manager")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.goto(f"{live_server.url}/versions/bot-3.1/")
    chart = page.locator("svg.measure-chart").first
    chart.wait_for()
    assert chart.is_visible()
    assert page.locator("svg.measure-chart circle").count() == 6  # one version, six measures
    assert "numeric accuracy" in chart.text_content()
    assert page.locator("table.scores-table .ci").count() >= 6
    assert "Upload a run" not in page.locator("header").inner_text()  # managers read, never write
