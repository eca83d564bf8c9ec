"""The API keeps its paths and operation ids while its code moves between
modules: clients generated from /api/openapi.json call operations by id."""

from django.test import SimpleTestCase

from reviewapp.api import api

OPERATIONS = [
    ("GET /api/gate", "reviewapp_api_release_gate"),
    ("GET /api/judge-runs/{judge_run_id}", "reviewapp_api_get_judge_run"),
    ("GET /api/judge-runs/{judge_run_id}/verdicts", "reviewapp_api_judge_run_verdicts"),
    ("GET /api/judges/{judge_id}/validation", "reviewapp_api_judge_validation_tables"),
    ("GET /api/runs/{run_id}", "reviewapp_api_get_run"),
    ("GET /api/runs/{run_id}/answers/{answer_id}", "reviewapp_api_get_answer"),
    ("GET /api/stable-from-grades", "reviewapp_api_stable_from_grades"),
    ("POST /api/check", "reviewapp_api_check_answers"),
    ("POST /api/imports", "reviewapp_api_import_run"),
    ("POST /api/judge-runs", "reviewapp_api_create_judge_run"),
    ("POST /api/judge-runs/{judge_run_id}/cancel", "reviewapp_api_cancel_judge_run"),
    ("POST /api/judge-runs/{judge_run_id}/confirm", "reviewapp_api_confirm_judge_run"),
    ("POST /api/question-sets", "reviewapp_api_upload_question_set"),
    ("POST /api/runs", "reviewapp_api_upload_run"),
]


class OperationIdTests(SimpleTestCase):
    def test_it_keeps_every_path_and_operation_id(self):
        schema = self.client.get("/api/openapi.json").json()
        operations = sorted(
            (f"{method.upper()} {path}", operation["operationId"])
            for path, methods in schema["paths"].items()
            for method, operation in methods.items()
        )
        self.assertEqual(operations, OPERATIONS)

    def test_it_names_an_operation_by_its_function_wherever_the_function_lives(self):
        ids = {
            api.get_openapi_operation_id(operation)
            for router in api._get_bound_routers()
            for path_view in router.path_operations.values()
            for operation in path_view.operations
        }
        self.assertEqual(ids, {operation_id for _, operation_id in OPERATIONS})


class DocsTests(SimpleTestCase):
    def test_the_api_docs_lead_back_to_the_app(self):
        description = self.client.get("/api/openapi.json").json()["info"]["description"]
        self.assertTrue(description.startswith("[← Back to the app](/) · [Pipeline tokens](/tokens/)"))
