"""Schemathesis sends requests made from the OpenAPI schema to the API, in
process, as a lead with a valid token: none may answer 5xx."""

import hypothesis
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reviewapp.models import ApiToken
from tests.helpers import make_user

# Per operation: enough to reach the refusals, few enough for about a minute on two cores.
MAX_EXAMPLES = 25


@pytest.fixture
def lead_token(db) -> str:
    _, key = ApiToken.issue(user=make_user("lead"), name="schemathesis")
    return key


@pytest.fixture
def in_process_requests():
    """The app runs in this test's transaction: closing the connection at the
    end of each request, as a server does, would end it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# Loaded once, when the tests are collected: the schema needs no database.
# (schemathesis.pytest.from_fixture would load it per test, but fails on
# pytest 9, which dropped the node attribute it rewrites.)
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())
schema.config.generation.update(max_examples=MAX_EXAMPLES)


@schema.parametrize()
@hypothesis.settings(
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture, hypothesis.HealthCheck.too_slow],
)
def test_it_never_answers_5xx(case, lead_token, in_process_requests):
    # Never a 5xx; and every status and body as the schema documents it.
    # (Schema-valid requests may still be refused: a file's content is more
    # than its schema says, so positive_data_acceptance is not asked for.)
    case.call_and_validate(
        headers={"Authorization": f"Bearer {lead_token}"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            response_schema_conformance,
            content_type_conformance,
        ],
    )


def test_it_documents_each_refusal(client, db):
    """The statuses the API answers besides success are in the schema, so
    that clients (and Schemathesis) know them."""
    paths = client.get("/api/openapi.json").json()["paths"]
    documented = {
        (method.upper(), path): set(operation["responses"])
        for path, operations in paths.items()
        for method, operation in operations.items()
    }
    assert documented == {
        ("POST", "/api/runs"): {"200", "201", "400", "401", "403", "411", "413", "422"},
        ("GET", "/api/runs/{run_id}"): {"200", "401", "403", "404", "422"},
        ("GET", "/api/runs/{run_id}/answers/{answer_id}"): {"200", "401", "403", "404", "422"},
        ("POST", "/api/question-sets"): {"201", "400", "401", "403", "411", "413", "422"},
        ("POST", "/api/imports"): {"200", "201", "400", "401", "403", "411", "413", "422"},
        ("GET", "/api/gate"): {"200", "401", "403", "409", "422"},
        ("POST", "/api/judge-runs"): {"201", "400", "401", "403", "409", "422"},
        ("POST", "/api/judge-runs/{judge_run_id}/confirm"): {"200", "401", "403", "404", "409", "422"},
        ("POST", "/api/judge-runs/{judge_run_id}/cancel"): {"200", "401", "403", "404", "422"},
        ("GET", "/api/judge-runs/{judge_run_id}"): {"200", "401", "403", "404", "422"},
        ("GET", "/api/judge-runs/{judge_run_id}/verdicts"): {"200", "401", "403", "404", "422"},
        ("GET", "/api/judges/{judge_id}/validation"): {"200", "401", "403", "404", "422"},
        ("POST", "/api/check"): {"200", "400", "401", "403", "411", "413", "422"},
        ("GET", "/api/stable-from-grades"): {"200", "401", "403", "404", "422"},
    }
