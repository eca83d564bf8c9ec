"""Who reaches what: every URL of reviewapp.urls and every operation of the
pipeline API, for each role, by GET and by POST, against the table below.

The table is the rule book. A URL name or an API operation without a rule
fails the test with "add a rule for it", so a new view cannot ship unguarded.
Pages send the anonymous to the login page (302) and the API answers them 401;
a role the rule leaves out gets 403; a method the view does not take is 405
for everyone. Each request runs in a savepoint that is rolled back, so the
requests cannot change what the next one sees.
"""

from __future__ import annotations

import copy
import uuid

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import Client, TestCase
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from reviewapp.api import CHECK_TOKENS, api
from reviewapp.core.roles import API_USERS, READERS_OF_RUNS, SCOPES, WRITERS
from reviewapp.judges.services.judge_versions import judge_version_save
from reviewapp.judges.services.judging import judge_run_estimate
from reviewapp.models import ApiToken, Role
from reviewapp.paired.services import paired_assign, paired_draw
from reviewapp.review.services.review import JudgementInput, judgement_submit, rubric_default
from reviewapp.review.services.samples import Frame, sample_assign, sample_draw
from tests.fixtures import load_generated_run, twin
from tests.helpers import KeepsClassFiles, make_user

ANONYMOUS, REVIEWER, LEAD, MANAGER, ADMIN, NO_ROLE = (
    "anonymous",
    "reviewer",
    "lead",
    "manager",
    "admin",
    "no_role",
)
PRINCIPALS = (ANONYMOUS, REVIEWER, LEAD, MANAGER, ADMIN, NO_ROLE)
PEOPLE = PRINCIPALS[1:]
REVIEWING = (Role.REVIEWER, Role.LEAD, Role.ADMIN)
LEADS = (Role.LEAD, Role.ADMIN)


def only(roles: tuple[str, ...], status: int = 200, **otherwise: int) -> dict[str, int]:
    """``status`` for people holding one of ``roles``, 403 for other people,
    and ``otherwise`` (by principal) where a view answers something else."""
    expected = {person: status if person in roles else 403 for person in PEOPLE}
    return {**expected, **otherwise}


def everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(PRINCIPALS, status)


NOT_ALLOWED = everyone(405)

# URL name -> what each principal gets by GET and by POST (an empty form).
# Anonymous visitors of a page are sent to log in unless the rule names them.
PAGES: dict[str, dict[str, dict[str, int]]] = {
    "home": {"GET": only(READERS_OF_RUNS, reviewer=302, no_role=302), "POST": NOT_ALLOWED},
    # /favicon.ico points at the static icon, for everyone and whatever the method.
    "favicon": {"GET": everyone(301), "POST": everyone(301)},
    "login": {"GET": everyone(200), "POST": everyone(200)},
    "logout": {"GET": NOT_ALLOWED, "POST": everyone(302)},
    "run-upload": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    # An empty confirmation names no pending upload: back to the upload page.
    "run-upload-confirm": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "run-import": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    # An empty confirmation names no pending import: back to the first step.
    "run-import-confirm": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "run-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "run-rescore": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "run-retry": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "run-exclude": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "run-overhead": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "scoring-retry": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "scoring-open-sealed": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    # Leads confirm a batch of findings into a new set version; an empty POST is refused.
    "scoring-findings-into-set": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "answer-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "set-list": {"GET": only(READERS_OF_RUNS), "POST": only(WRITERS, 400)},
    "set-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    # Leads draw production questions into a new set version; an empty POST is refused.
    "set-from-production": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "sample-list": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "sample-new": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "sample-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "sample-assign": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "sample-item": {"GET": only(READERS_OF_RUNS), "POST": only(WRITERS, 400)},
    "rubric-list": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "rubric-new": {"GET": only(LEADS), "POST": only(LEADS, 400)},
    "rubric-edit": {"GET": only(LEADS), "POST": only(LEADS, 400)},
    "sample-agreement": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "calibration-new": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    # No pattern chosen is refused with its error (400).
    "calibration-patterns-new": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 400)},
    "lead-queue": {"GET": only(LEADS), "POST": NOT_ALLOWED},
    "reader-consistency": {"GET": only(LEADS), "POST": NOT_ALLOWED},
    "adjudicate": {"GET": only(LEADS), "POST": only(LEADS, 400)},
    "register": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "agreement": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "version-list": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "version-compare": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    # The gate asked in the browser: the same readers as the API's gate:read.
    "version-gate": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    # An empty form is refused with its error (400); managers read the weights only.
    "severity": {"GET": only(READERS_OF_RUNS), "POST": only(WRITERS, 400)},
    "planner": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "version-dashboard": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "version-export": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "run-log": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-scores": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-findings": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-question-times": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-answers-inspect": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-answers-ragas": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "export-judgements": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "review-queue": {"GET": only(REVIEWING), "POST": NOT_ALLOWED},
    # Readers reach only their own items: anyone else's is a 404, as for a
    # lead or admin who reads nothing in this sample.
    "review-start": {"GET": only(REVIEWING, 302, lead=404, admin=404), "POST": NOT_ALLOWED},
    "review-item": {
        "GET": only(REVIEWING, 200, lead=404, admin=404),
        "POST": only(REVIEWING, 400, lead=404, admin=404),
    },
    # Blinded comparison: leads draw, assign and decide, managers read the
    # results; readers reach only their own pairs (a 404 for anyone else's).
    "paired-list": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "paired-new": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "paired-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "paired-assign": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "paired-decide": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "paired-queue": {"GET": only(REVIEWING), "POST": NOT_ALLOWED},
    "paired-start": {"GET": only(REVIEWING, 302, lead=404, admin=404), "POST": NOT_ALLOWED},
    "paired-item": {
        "GET": only(REVIEWING, 200, lead=404, admin=404),
        "POST": only(REVIEWING, 400, lead=404, admin=404),
    },
    # Tokens are one's own: another person's token is a 404.
    "token-list": {"GET": only(API_USERS), "POST": only(API_USERS, 400)},
    "token-revoke": {"GET": NOT_ALLOWED, "POST": only(API_USERS, 302, manager=404, admin=404)},
    "audit-trail": {"GET": only(WRITERS), "POST": NOT_ALLOWED},
    # Model graders: leads and admins write, managers read, reviewers never see a model grade.
    "judge-list": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "judge-new": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "judge-edit": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "judge-validation": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "judge-validation-draw": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "judge-run-new": {"GET": only(WRITERS), "POST": only(WRITERS, 400)},
    "judge-run-detail": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    "judge-run-confirm": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "judge-run-cancel": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "judge-run-resume": {"GET": NOT_ALLOWED, "POST": only(WRITERS, 302)},
    "judge-run-export": {"GET": only(READERS_OF_RUNS), "POST": NOT_ALLOWED},
    # The API's schema and docs are public, so pipelines can be written against them.
    # (ninja answers them whatever the method; they change nothing).
    "api:openapi-json": {"GET": everyone(200), "POST": everyone(200)},
    "api:openapi-view": {"GET": everyone(200), "POST": everyone(200)},
    "api:api-root": {"GET": everyone(404), "POST": everyone(404)},
}

# Django's admin site guards itself: staff only (none of these principals is
# staff; the admin role is not), everyone else is sent to its own login.
ADMIN_SITE_EXCEPTIONS = {"admin:login": {"GET": everyone(200), "POST": everyone(200)}}
ADMIN_SITE_RULE = {"GET": everyone(302), "POST": everyone(302)}

# API operation id -> what each token gets by its method; the other method is 405.
# Tokens here hold every scope, so only their user's role decides.
OPERATIONS: dict[str, dict[str, int]] = {
    "reviewapp_api_upload_run": only(WRITERS, 422),
    "reviewapp_api_upload_question_set": only(WRITERS, 422),
    "reviewapp_api_import_run": only(WRITERS, 422),
    "reviewapp_api_get_run": only(READERS_OF_RUNS),
    "reviewapp_api_get_answer": only(READERS_OF_RUNS),
    # One run against itself: the gate cannot show the candidate safe (409).
    "reviewapp_api_release_gate": only(READERS_OF_RUNS, 409),
    "reviewapp_api_stable_from_grades": only(READERS_OF_RUNS),
    # An empty form is not the JSON body the operation reads (400).
    "reviewapp_api_create_judge_run": only(WRITERS, 400),
    # The fixture's judge run is estimated: confirming starts it, cancelling stops it.
    "reviewapp_api_confirm_judge_run": only(WRITERS),
    "reviewapp_api_cancel_judge_run": only(WRITERS),
    "reviewapp_api_get_judge_run": only(READERS_OF_RUNS),
    "reviewapp_api_judge_run_verdicts": only(READERS_OF_RUNS),
    "reviewapp_api_judge_validation_tables": only(READERS_OF_RUNS),
    # The number check for an assistant's runtime: an empty form is not the JSON body it reads (400).
    # The matrix's tokens hold every scope, and check stands alone on a token:
    # refused for everyone (a check-only token is tried below).
    "reviewapp_api_check_answers": only((), 400),
}
# The one operation the "check" scope opens; no other scope opens it.
CHECK_OPERATION = "reviewapp_api_check_answers"


def url_patterns(patterns=None, prefix: str = "", namespace: str = ""):
    """(name with its namespace, route, pattern) for every URL pattern; the name
    of an unnamed pattern is its namespace alone."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from url_patterns(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            yield namespace + (entry.name or ""), prefix + str(entry.pattern), entry


def is_api_operation(pattern: URLPattern) -> bool:
    # ninja routes every operation through one view per path, checked by schema below.
    return pattern.callback.__module__ == "ninja.operation"


class PermissionMatrixTests(KeepsClassFiles, TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.logged_run = load_generated_run(answers=30, assistant="bot-perm-1", version="perm-1")
        cls.scoring = cls.logged_run.scorings.get()
        cls.answer = cls.logged_run.answers.order_by("id").first()
        cls.users = {
            REVIEWER: make_user("reviewer"),
            LEAD: make_user("lead"),
            MANAGER: make_user("manager"),
            ADMIN: make_user("admin"),
            NO_ROLE: get_user_model().objects.create_user(username="nobody", password="unused-pass-1"),
        }
        cls.sample = sample_draw(
            frame=Frame(run=cls.logged_run), size=3, seed=3, rubric_version=rubric_default()
        )
        assignments = sample_assign(sample=cls.sample, reviewers=[cls.users[REVIEWER]], readers_per_item=1)
        cls.assignment = min(assignments, key=lambda a: a.order)
        judgement_submit(
            assignment=cls.assignment,
            author=cls.users[REVIEWER],
            data=JudgementInput(
                addresses_question=True,
                rubric_answers=dict.fromkeys(
                    ("series", "period", "unit", "caveat", "unsupported_claim"), "yes"
                ),
                grade="resolved",
            ),
            submission_key=uuid.uuid4(),
        )
        cls.paired = paired_draw(
            run_a=cls.logged_run, run_b=twin(cls.logged_run, "bot-perm-2"), size=3, seed=3
        )
        cls.pair = paired_assign(
            paired_sample=cls.paired, reviewers=[cls.users[REVIEWER]], readers_per_item=1
        )[0]
        cls.lead_token, _ = ApiToken.issue(user=cls.users[LEAD], name="page token")
        cls.judge_version = judge_version_save(
            name="matrix judge", provider="stand-in", model="", metrics=["faithfulness"]
        )
        cls.judge_run = judge_run_estimate(judge_versions=[cls.judge_version], run=cls.logged_run)
        cls.keys = {}
        for principal, user in cls.users.items():
            key = f"matrix-{principal}-key"
            ApiToken.objects.create(
                user=user, name="matrix", key_hash=ApiToken.hash(key), scopes=list(SCOPES)
            )
            cls.keys[principal] = key

    def setUp(self):
        super().setUp()
        # Kept tokens outlive a test's transaction: each test looks its tokens up afresh.
        CHECK_TOKENS.clear()
        self.addCleanup(CHECK_TOKENS.clear)

    def url_arguments(self) -> dict[str, object]:
        return {
            "run_id": self.logged_run.id,
            "scoring_id": self.scoring.id,
            "answer_id": self.answer.id,
            "version": self.logged_run.set_version.version,
            "label": self.logged_run.assistant_version.label,
            "sample_id": self.sample.id,
            "position": self.assignment.item.position,
            "item_id": self.assignment.item_id,
            "rubric_id": self.sample.rubric_version.rubric_id,
            "alias": self.assignment.alias,
            "fmt": "csv",
            "token_id": self.lead_token.id,
            "judge_run_id": self.judge_run.id,
            "judge_id": self.judge_version.judge_id,
            "paired_id": self.paired.id,
            "pair_alias": self.pair.alias,
            # The admin site's own arguments: its guard answers before it looks them up.
            "app_label": "auth",
            "object_id": str(self.users[LEAD].pk),
            "id": str(self.users[LEAD].pk),
            "content_type_id": ContentType.objects.get_for_model(get_user_model()).id,
        }

    def query(self, name: str) -> dict[str, str]:
        versions = {"set": self.logged_run.set_version.version}
        versions_of_set = {"set_version": self.logged_run.set_version.version}
        label = self.logged_run.assistant_version.label
        return {
            "version-compare": {**versions, "baseline": label, "candidate": label},
            "reviewapp_api_release_gate": {"baseline": label, "candidate": label},
            "reviewapp_api_stable_from_grades": {**versions_of_set, "version": label},
        }.get(name, {})

    def clients(self) -> dict[str, Client]:
        clients = {ANONYMOUS: Client()}
        for principal, user in self.users.items():
            clients[principal] = Client()
            clients[principal].force_login(user)
        return clients

    def request(self, client: Client, method: str, url: str, data=None, **headers):
        # Rolled back, and the cookies put back, so that a POST that does its
        # work (a logout among them) changes nothing for the next request.
        cookies = copy.deepcopy(client.cookies)
        with transaction.atomic():
            response = getattr(client, method.lower())(url, data or {}, **headers)
            transaction.set_rollback(True)
        client.cookies = cookies
        return response

    def test_it_has_a_rule_for_every_url_and_each_role_gets_what_its_rule_says(self):
        arguments = self.url_arguments()
        clients = self.clients()
        missing, wrong = [], []
        for name, route, pattern in url_patterns():
            if is_api_operation(pattern):
                continue
            if name.startswith("admin:"):
                rule = ADMIN_SITE_EXCEPTIONS.get(name, ADMIN_SITE_RULE)
                if not pattern.name:
                    continue  # the admin site's unnamed redirects and catch-all sit behind the same guard
            elif not pattern.name or name not in PAGES:
                missing.append(f"{pattern.name or '(unnamed)'} at /{route}: name it and add a rule to PAGES")
                continue
            else:
                rule = PAGES[name]
            url = reverse(name, kwargs={key: arguments[key] for key in pattern.pattern.regex.groupindex})
            for method in ("GET", "POST"):
                for principal in PRINCIPALS:
                    # Rules made by only() leave the anonymous out: pages send them to log in.
                    expected = rule[method].get(principal, 302)
                    response = self.request(
                        clients[principal], method, url, self.query(name) if method == "GET" else None
                    )
                    if response.status_code != expected:
                        wrong.append(
                            f"{method} {name} as {principal}: {response.status_code}, expected {expected}"
                        )
                    elif principal == ANONYMOUS and expected == 302:
                        login = reverse("admin:index" if name.startswith("admin:") else "login")
                        if not response["Location"].startswith(login):
                            wrong.append(f"{method} {name} as anonymous: sent to {response['Location']}")
        self.assertEqual(missing, [])
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_it_has_a_rule_for_every_api_operation_and_each_role_gets_what_its_rule_says(self):
        schema = api.get_openapi_schema()
        operation_urls = [pattern for _, _, pattern in url_patterns() if is_api_operation(pattern)]
        # Every operation's path is in the schema, so walking the schema walks them all.
        self.assertEqual(len(operation_urls), len(schema["paths"]))
        client = Client()
        arguments = self.url_arguments()
        missing, wrong = [], []
        for path, methods in schema["paths"].items():
            url = path.format(**arguments)
            for method in ("GET", "POST"):
                operation = methods.get(method.lower())
                if operation is None:
                    for principal in PRINCIPALS:
                        headers = {} if principal == ANONYMOUS else self.bearer(principal)
                        status = self.request(client, method, url, **headers).status_code
                        if status != 405:
                            wrong.append(f"{method} {path} as {principal}: {status}, expected 405")
                    continue
                name = operation["operationId"]
                if name not in OPERATIONS:
                    missing.append(f"{name} ({method} {path}): add a rule for it to OPERATIONS")
                    continue
                expected_by_role = {ANONYMOUS: 401, **OPERATIONS[name]}
                for principal in PRINCIPALS:
                    headers = {} if principal == ANONYMOUS else self.bearer(principal)
                    data = self.query(name) if method == "GET" else None
                    status = self.request(client, method, url, data, **headers).status_code
                    if status != expected_by_role[principal]:
                        wrong.append(
                            f"{method} {path} as {principal}: {status}, expected {expected_by_role[principal]}"
                        )
        self.assertEqual(missing, [])
        self.assertEqual(wrong, [], "\n".join(wrong))

    def bearer(self, principal: str) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.keys[principal]}"}

    def test_a_check_token_opens_the_check_and_no_other_operation(self):
        """An admin's tokens, so that the role never stands in the way: one
        holding only "check" is refused (403) by every other operation, and
        one holding every other scope is refused by the check."""
        admin = self.users[ADMIN]
        check_only, everything_else = "matrix-check-only-key", "matrix-all-but-check-key"
        for key, scopes in ((check_only, ["check"]), (everything_else, [s for s in SCOPES if s != "check"])):
            ApiToken.objects.create(user=admin, name=key, key_hash=ApiToken.hash(key), scopes=scopes)
        client = Client()
        arguments = self.url_arguments()
        reached, wrong = [], []
        for path, methods in api.get_openapi_schema()["paths"].items():
            url = path.format(**arguments)
            for method, operation in methods.items():
                name = operation["operationId"]
                data = self.query(name) if method == "get" else None
                if name == CHECK_OPERATION:
                    allowed = self.request(
                        client, method, url, data, HTTP_AUTHORIZATION=f"Bearer {check_only}"
                    )
                    reached.append((name, allowed.status_code))
                    key, expected = everything_else, "This token does not hold the scope check."
                else:
                    key = check_only
                    expected = f"This token does not hold the scope {self.scope_of(name)}."
                refused = self.request(client, method, url, data, HTTP_AUTHORIZATION=f"Bearer {key}")
                if (refused.status_code, refused.json()) != (403, {"detail": expected}):
                    wrong.append(f"{method.upper()} {path}: {refused.status_code} {refused.content[:200]!r}")
        self.assertEqual(reached, [(CHECK_OPERATION, 400)])  # the empty form reached the view
        self.assertEqual(wrong, [])
        self.assertEqual(
            [name for name, scope in SCOPES.items() if "POST /api/check" in scope.summary], ["check"]
        )

    @staticmethod
    def scope_of(operation_id: str) -> str:
        """The scope the operation's TokenAuth asks for."""
        for router in api._get_bound_routers():
            for path_view in router.path_operations.values():
                for operation in path_view.operations:
                    if api.get_openapi_operation_id(operation) == operation_id:
                        return operation.auth_callbacks[0].scope
        raise LookupError(operation_id)

    def test_a_reviewer_reaching_another_readers_item_gets_a_404(self):
        other = make_user("reviewer2", "reviewer")
        client = Client()
        client.force_login(other)
        url = reverse("review-item", args=[self.sample.id, self.assignment.alias])
        self.assertEqual(client.get(url).status_code, 404)
        self.assertEqual(client.post(url, {}).status_code, 404)

    def test_the_table_names_no_url_or_operation_that_is_gone(self):
        names = {name for name, _, pattern in url_patterns() if not is_api_operation(pattern)}
        operations = {
            op["operationId"]
            for methods in api.get_openapi_schema()["paths"].values()
            for op in methods.values()
        }
        self.assertEqual(set(PAGES) - names, set())
        self.assertEqual(set(OPERATIONS) - operations, set())
        self.assertEqual(set(ADMIN_SITE_EXCEPTIONS) - names, set())
