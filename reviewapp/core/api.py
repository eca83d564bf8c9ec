"""What every API router shares: the refusal shapes, and turning an
ApplicationError into its JSON response."""

from __future__ import annotations

from ninja import Schema, Status

from reviewapp.core.errors import ApplicationError


class ErrorOut(Schema):
    detail: str
    errors: list[str]


class DetailOut(Schema):
    detail: str


class InvalidOut(Schema):
    detail: list[dict]


# What any operation may answer besides its own statuses: 401 for a missing
# or dead token, 403 for a token short of role or scope, 422 for a request
# that does not fit the schema; an upload also 400 for a refused file (each
# problem named), 411 without Content-Length and 413 past the size limit.
REFUSALS = {401: DetailOut, 403: DetailOut, 422: InvalidOut}
UPLOAD_REFUSALS = {**REFUSALS, 400: ErrorOut, 411: ErrorOut, 413: ErrorOut}



def refusal_body(error: ApplicationError) -> tuple[dict, int]:
    """The JSON body and status that answer a refusal."""
    return {"detail": "the upload was refused", "errors": error.errors}, error.status


def _invalid(field: str, message: str):
    """422 naming ``field`` in the body, shaped like the API's own validation errors."""
    return Status(
        422, {"detail": [{"type": "value_error", "loc": ["body", "payload", field], "msg": message}]}
    )
