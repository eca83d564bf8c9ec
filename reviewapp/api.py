"""The pipeline API: upload runs and question sets, read scores.

Authenticated by a bearer token (the API tokens page, or `manage.py api_token
USER`). A token acts as its user: each operation needs one scope on the token
and one of that scope's roles (reviewapp.core.roles.SCOPES) on the user, the same
roles the pages ask for. The OpenAPI schema is served at /api/openapi.json and
browsable at /api/docs.
"""


from __future__ import annotations

from ninja import NinjaAPI

from reviewapp.accounts.auth import CHECK_TOKENS, TokenAuth, _scopes_table
from reviewapp.core.api import refusal_body
from reviewapp.core.errors import ApplicationError
from reviewapp.judges.api import router as judges_router
from reviewapp.models import Role
from reviewapp.runs.api import router as runs_router
from reviewapp.scorings.api import router as scorings_router
from reviewapp.versions.api import router as versions_router


class ReviewAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        # Operation ids were derived from the module path when every operation
        # lived in reviewapp/api.py; they stay so, so that clients generated
        # from the schema keep working now each domain has its own router.
        return f"reviewapp_api_{operation.view_func.__name__}"


api = ReviewAPI(
    title="Answer review API",
    version="1",
    description=(
        "[← Back to the app](/) · [Pipeline tokens](/tokens/)\n\n"
        "Upload runs of logged answers and read their automatic measures; grade a run with model "
        "graders (judge runs: estimate, confirm, follow, export); check an answer's numbers at the "
        "moment it is shown (`POST /api/check`).\n\n"
        "Send `Authorization: Bearer TOKEN`. A token acts as the user it belongs to, limited to its "
        "scopes, until it expires or is revoked; each operation needs its scope and one of the scope's "
        f"roles ({Role.REVIEWER}s have none). Missing or dead token: 401; "
        "role or scope short: 403. A token's last use is recorded to the minute. For speed, a server "
        f"process keeps a `check` token it has seen for {CHECK_TOKENS.seconds:g} s: revoking it, or "
        f"taking its user's role away, reaches `POST /api/check` within {CHECK_TOKENS.seconds:g} s "
        "(everything else at once).\n\n" + _scopes_table()
    ),
    auth=TokenAuth(),
    urls_namespace="api",
)

# Each domain owns its operations (its api.py).
api.add_router("", runs_router)
api.add_router("", scorings_router)
api.add_router("", judges_router)
api.add_router("", versions_router)


@api.exception_handler(ApplicationError)
def application_error(request, error: ApplicationError):
    """Every refusal a service raises, answered the same way (see core/errors.py)."""
    body, status = refusal_body(error)
    return api.create_response(request, body, status=status)
