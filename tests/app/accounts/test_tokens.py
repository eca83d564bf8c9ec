"""API tokens: who may have one, what it may do, how long it lives, and the
page where people manage their own."""

import hashlib
from datetime import timedelta
from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from reviewapp.api import CHECK_TOKENS
from reviewapp.models import ApiToken, TokenRefused
from tests.helpers import PASSWORD, BaseTestCase, make_user


def bearer(key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


class TokenIssueTests(TestCase):
    def test_it_gives_a_token_every_scope_the_role_allows_but_the_check_by_default(self):
        lead_token, _ = ApiToken.issue(user=make_user("lead"), name="ci")
        manager_token, _ = ApiToken.issue(user=make_user("manager"), name="ci")
        self.assertEqual(lead_token.scopes, ["runs:write", "sets:write", "runs:read", "gate:read", "judges:write"])
        self.assertEqual(manager_token.scopes, ["runs:read", "gate:read"])

    def test_it_stores_only_the_hash_and_expires_after_the_default_days(self):
        before = timezone.now()
        token, key = ApiToken.issue(user=make_user("lead"), name="ci")
        token.refresh_from_db()
        self.assertEqual(token.key_hash, hashlib.sha256(key.encode()).hexdigest())
        self.assertFalse(ApiToken.objects.filter(key_hash=key).exists())
        self.assertGreaterEqual(token.expires_at, before + timedelta(days=90))
        self.assertLess(token.expires_at, timezone.now() + timedelta(days=90, seconds=5))

    def test_it_refuses_reviewers_and_people_without_a_role(self):
        with self.assertRaisesMessage(TokenRefused, "reviewer has no role that may use the API"):
            ApiToken.issue(user=make_user("reviewer"), name="ci")
        nobody = get_user_model().objects.create_user(username="nobody")
        with self.assertRaisesMessage(TokenRefused, "nobody has no role that may use the API"):
            ApiToken.issue(user=nobody, name="ci")
        self.assertFalse(ApiToken.objects.exists())

    def test_it_refuses_a_scope_beyond_the_role_or_unknown_and_a_lifetime_out_of_range(self):
        manager = make_user("manager")
        with self.assertRaisesMessage(TokenRefused, "manager's role does not allow the scope runs:write"):
            ApiToken.issue(user=manager, name="ci", scopes=["runs:read", "runs:write"])
        with self.assertRaisesMessage(TokenRefused, "Unknown scope 'runs:delete'"):
            ApiToken.issue(user=manager, name="ci", scopes=["runs:delete"])
        with self.assertRaisesMessage(TokenRefused, "A token lasts from 1 to 365 days, not 400."):
            ApiToken.issue(user=manager, name="ci", days=400)
        self.assertFalse(ApiToken.objects.exists())


class ApiTokenCommandTests(TestCase):
    def test_it_prints_a_token_for_a_user_with_a_role(self):
        lead = make_user("lead")
        out = StringIO()
        call_command("api_token", "lead", "--scope", "runs:read", "--days", "7", stdout=out)
        token = ApiToken.objects.get(user=lead)
        self.assertEqual(token.key_hash, ApiToken.hash(out.getvalue().strip()))
        self.assertEqual(token.scopes, ["runs:read"])
        self.assertEqual((token.expires_at - token.created_at).days, 6)  # just under 7 days

    def test_it_refuses_an_unknown_user_and_creates_no_one(self):
        with self.assertRaisesMessage(CommandError, "There is no user named 'laed'; no token was made."):
            call_command("api_token", "laed")
        self.assertFalse(get_user_model().objects.filter(username="laed").exists())
        self.assertFalse(ApiToken.objects.exists())

    def test_it_refuses_a_user_without_a_role_or_a_scope_beyond_the_role(self):
        get_user_model().objects.create_user(username="nobody")
        with self.assertRaisesMessage(CommandError, "nobody has no role that may use the API"):
            call_command("api_token", "nobody")
        make_user("manager")
        with self.assertRaisesMessage(CommandError, "manager's role does not allow the scope runs:write"):
            call_command("api_token", "manager", "--scope", "runs:write")
        self.assertFalse(ApiToken.objects.exists())


class TokenUseTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()

    def token(self, **changes) -> str:
        token, key = ApiToken.issue(user=self.lead, name="ci", scopes=changes.pop("scopes", None))
        ApiToken.objects.filter(id=token.id).update(**changes)
        return key

    def test_a_live_token_works_and_records_its_use(self):
        key = self.token()
        self.assertIsNone(ApiToken.objects.get().last_used_at)
        before = timezone.now()
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)
        self.assertTrue(before <= ApiToken.objects.get().last_used_at <= timezone.now())

    def test_it_records_a_use_at_most_once_a_minute(self):
        key = self.token()
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)
        first = ApiToken.objects.get().last_used_at
        with CaptureQueriesContext(connection) as queries:
            self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)
        self.assertEqual([q["sql"] for q in queries if q["sql"].startswith("UPDATE")], [])
        self.assertEqual(ApiToken.objects.get().last_used_at, first)
        a_minute_ago = timezone.now() - timedelta(seconds=61)
        ApiToken.objects.update(last_used_at=a_minute_ago)
        before = timezone.now()
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)
        self.assertTrue(before <= ApiToken.objects.get().last_used_at <= timezone.now())

    def test_an_expired_token_gets_401(self):
        key = self.token(expires_at=timezone.now() - timedelta(seconds=1))
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 401)

    def test_a_revoked_token_gets_401(self):
        key = self.token(revoked_at=timezone.now())
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 401)

    def test_the_token_of_an_inactive_user_gets_401(self):
        key = self.token()
        get_user_model().objects.filter(id=self.lead.id).update(is_active=False)
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 401)

    def test_a_token_without_the_scope_gets_403_and_is_not_counted_as_used(self):
        key = self.token(scopes=["runs:read"])
        refused = self.client.post("/api/runs", {}, **bearer(key))
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(refused.json(), {"detail": "This token does not hold the scope runs:write."})
        self.assertEqual(
            self.client.get("/api/gate", {"baseline": "a", "candidate": "b"}, **bearer(key)).status_code, 403
        )
        self.assertIsNone(ApiToken.objects.get().last_used_at)

    def test_a_token_whose_user_lost_the_role_gets_403(self):
        key = self.token()
        self.lead.groups.clear()
        refused = self.client.get("/api/runs/999", **bearer(key))
        self.assertEqual(refused.status_code, 403)
        self.assertEqual(
            refused.json(),
            {"detail": "Your role does not give access to this operation: it is for lead, manager or admin."},
        )


class TokenPageTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.lead = make_user("lead")
        cls.manager = make_user("manager")

    def test_it_makes_a_token_and_shows_its_key_once(self):
        self.client.login(username="lead", password=PASSWORD)
        made = self.client.post(
            reverse("token-list"), {"name": "nightly", "scopes": ["runs:write", "runs:read"], "days": "30"}
        )
        self.assertEqual(made.status_code, 200)
        key = made.context["key"]
        self.assertContains(made, key)
        self.assertContains(made, "it is shown only this once")
        self.assertIn("no-store", made["Cache-Control"])
        token = ApiToken.objects.get()
        self.assertEqual(
            (token.name, token.scopes, token.key_hash),
            ("nightly", ["runs:write", "runs:read"], ApiToken.hash(key)),
        )
        self.assertEqual((token.expires_at - token.created_at).days, 29)
        again = self.client.get(reverse("token-list"))
        self.assertNotContains(again, key)
        self.assertContains(again, "nightly")
        self.assertContains(again, "<code>runs:write</code>, <code>runs:read</code>", html=True)
        self.assertContains(again, token.expires_at.strftime("%Y-%m-%d %H:%M"))
        self.assertContains(again, "<td>never</td>", html=False)  # last used
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)

    def test_it_says_how_long_a_revoked_check_token_may_still_pass_the_check(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("token-list"))
        self.assertEqual(CHECK_TOKENS.seconds, 10)
        self.assertContains(page, "servers keep a token that used\n  <code>check</code> for up to 10 seconds")
        self.assertContains(page, 'value="check"')

    def test_it_offers_a_manager_only_the_scopes_a_manager_can_use(self):
        self.client.login(username="manager", password=PASSWORD)
        page = self.client.get(reverse("token-list"))
        self.assertContains(page, 'value="runs:read"')
        self.assertNotContains(page, 'value="runs:write"')
        refused = self.client.post(
            reverse("token-list"), {"name": "ci", "scopes": ["runs:write"], "days": "30"}
        )
        self.assertEqual(refused.status_code, 400)
        self.assertFalse(ApiToken.objects.exists())

    def test_it_refuses_a_lifetime_beyond_the_maximum(self):
        self.client.login(username="lead", password=PASSWORD)
        refused = self.client.post(
            reverse("token-list"), {"name": "ci", "scopes": ["runs:read"], "days": "366"}
        )
        self.assertContains(refused, "less than or equal to 365", status_code=400)
        self.assertFalse(ApiToken.objects.exists())

    def test_it_revokes_ones_own_token_and_the_token_stops_working(self):
        token, key = ApiToken.issue(user=self.lead, name="ci")
        self.client.login(username="lead", password=PASSWORD)
        response = self.client.post(reverse("token-revoke", args=[token.id]))
        self.assertRedirects(response, reverse("token-list"))
        token.refresh_from_db()
        self.assertTrue(token.created_at <= token.revoked_at <= timezone.now())
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 401)
        page = self.client.get(reverse("token-list"))
        self.assertContains(
            page,
            f'<span class="status failed">revoked {token.revoked_at:%Y-%m-%d %H:%M}</span>',
            html=False,
        )
        self.assertNotContains(page, ">Revoke</button>")  # a revoked token offers no button

    def test_a_user_cannot_revoke_another_persons_token(self):
        token, key = ApiToken.issue(user=self.lead, name="ci")
        self.client.login(username="manager", password=PASSWORD)
        self.assertEqual(self.client.post(reverse("token-revoke", args=[token.id])).status_code, 404)
        token.refresh_from_db()
        self.assertIsNone(token.revoked_at)
        self.assertEqual(self.client.get("/api/runs/999", **bearer(key)).status_code, 404)
        self.assertNotContains(self.client.get(reverse("token-list")), "ci</td>")

    def test_the_revoke_button_takes_only_post(self):
        token, _ = ApiToken.issue(user=self.lead, name="ci")
        self.client.login(username="lead", password=PASSWORD)
        self.assertEqual(self.client.get(reverse("token-revoke", args=[token.id])).status_code, 405)

    def test_the_navigation_links_the_page_for_roles_that_can_use_the_api(self):
        self.client.login(username="manager", password=PASSWORD)
        self.assertContains(self.client.get(reverse("version-list")), reverse("token-list"))
        make_user("reviewer")
        self.client.login(username="reviewer", password=PASSWORD)
        queue = self.client.get(reverse("review-queue"))
        self.assertNotContains(queue, reverse("token-list"))
        self.assertEqual(self.client.get(reverse("token-list")).status_code, 403)


class TokenScopeDefaultsTests(BaseTestCase):
    """Issue 25, point 15: the page ticked every scope, judges:write (spends
    money) and check included, and a token holding every scope called the check."""

    def ticked(self, page) -> list[str]:
        form = page.context["form"]
        return list(form["scopes"].value() or [])

    def test_the_page_ticks_only_the_read_scopes_by_default(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("token-list"))
        self.assertEqual(self.ticked(page), ["runs:read", "gate:read"])

    def test_the_runtime_preset_ticks_the_check_alone_and_names_the_token(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("token-list"), {"preset": "runtime"})
        self.assertEqual(self.ticked(page), ["check"])
        self.assertEqual(page.context["form"]["name"].value(), "assistant runtime")
        self.assertContains(page, f'href="{reverse("token-list")}?preset=runtime"')

    def test_the_pipeline_preset_ticks_upload_and_read_but_not_judges(self):
        self.client.login(username="lead", password=PASSWORD)
        page = self.client.get(reverse("token-list"), {"preset": "pipeline"})
        self.assertEqual(self.ticked(page), ["runs:write", "sets:write", "runs:read", "gate:read"])

    def test_the_check_scope_is_never_given_beside_another(self):
        with self.assertRaisesMessage(TokenRefused, "The check scope stands alone"):
            ApiToken.issue(user=self.lead, name="both", scopes=["check", "runs:read"])
        self.assertFalse(ApiToken.objects.exists())
        default, _ = ApiToken.issue(user=self.lead, name="pipeline")
        self.assertNotIn("check", default.scopes)

    def test_a_token_made_before_the_rule_with_every_scope_cannot_call_the_check(self):
        token, key = ApiToken.issue(user=self.lead, name="old")
        ApiToken.objects.filter(id=token.id).update(scopes=[*token.scopes, "check"])
        answer = self.client.post(
            "/api/check",
            {"answer": "It was 7.6.", "language": "en", "retrieved_values": [7.6]},
            content_type="application/json",
            **bearer(key),
        )
        self.assertEqual(answer.status_code, 403)
        self.assertIn("check-only token", answer.json()["detail"])
