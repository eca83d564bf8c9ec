"""Refusing an upload that says it is too large, or does not say how large
it is, before reading a byte of it."""

import json

from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from reviewapp.core.uploads import limit_text

# Room for the form fields and multipart framing around the file itself.
ENVELOPE_BYTES = 1024 * 1024


class UploadLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and self._declared(request) > settings.MAX_UPLOAD_BYTES + ENVELOPE_BYTES:
            return self._refuse(request, f"the file is larger than the limit of {limit_text()}", status=413)
        if request.method == "POST" and self._unmeasured(request):
            # Django reads a body of undeclared length (a chunked upload) as
            # empty, which surfaced as a missing field or a CSRF failure.
            return self._refuse(
                request,
                "the request has no Content-Length (a chunked upload?): "
                "send the file with its length, as browsers and curl -F do",
                status=411,
                hint="send the form again from this page",
            )
        return self.get_response(request)

    @staticmethod
    def _refuse(request, message: str, *, status: int, hint: str = "") -> HttpResponse:
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": "the upload was refused", "errors": [message]}, status=status)
        body = render_to_string("too_large.html", {"message": message, "hint": hint}, request=request)
        return HttpResponse(body, status=status)

    @staticmethod
    def _unmeasured(request) -> bool:
        """A body is sent (a content type or a transfer encoding says so) but
        its length is not declared."""
        if request.META.get("CONTENT_LENGTH"):
            return False
        return bool(request.META.get("HTTP_TRANSFER_ENCODING") or request.META.get("CONTENT_TYPE"))

    @staticmethod
    def _declared(request) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0


class NulRefusalMiddleware:
    """Refuse an address holding a NUL character (`%00`) with a 400: the
    database cannot compare text with NUL in it, and every lookup by a label
    or id in the path or the query would otherwise fail with a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            message = "the address holds a NUL character (%00), which no label, id or option may hold"
            if request.path.startswith("/api/"):
                # As the API answers every other malformed parameter (its schema's 422).
                where = "path" if "\x00" in request.path else "query"
                problem = {"type": "value_error", "loc": [where], "msg": message}
                return JsonResponse({"detail": [problem]}, status=422)
            return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class NulFieldRefusalMiddleware:
    """The last word on a NUL character in a form or JSON body: PostgreSQL
    stores no text or JSON holding one, and a form that read its field
    without a check failed with a 500 (a note, severity weights, a judge's
    options). Forms that check for NUL say so beside the field themselves;
    whatever reaches the database instead is answered here with the fields
    named (a 400 page, or the API's 422) and the failing write not stored."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not _is_nul_refusal(exception):
            return None
        fields = _fields_with_nul(request) or ["a field"]
        many = len(fields) > 1
        message = (
            f"{'the fields' if many else 'the field'} {', '.join(fields)} {'hold' if many else 'holds'} "
            "a NUL character, which no text here may hold (it is invisible in most editors)"
        )
        if request.path.startswith("/api/"):
            problems = [{"type": "value_error", "loc": ["body", name], "msg": message} for name in fields]
            return JsonResponse({"detail": problems}, status=422)
        context = {"message": message, "hint": "send the form again without it", "title": "Not taken"}
        if connection.in_atomic_block:
            # Still inside a transaction the failed statement aborted (a
            # test's): the page's menu could not read the database, so the
            # sentence alone.
            plain = "text/plain; charset=utf-8"
            return HttpResponse(f"Not taken: {message}.", status=400, content_type=plain)
        return HttpResponse(render_to_string("too_large.html", context, request=request), status=400)


def _is_nul_refusal(exception: Exception) -> bool:
    """PostgreSQL's (or psycopg's) refusal of text or JSON holding NUL."""
    if type(exception).__name__ != "DataError":
        return False
    text = str(exception)
    return "NUL (0x00)" in text or "\\u0000" in text


def _fields_with_nul(request) -> list[str]:
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        return [
            name.replace("\x00", "\\0")
            for name, values in request.POST.lists()
            if "\x00" in name or any("\x00" in value or "\\u0000" in value for value in values)
        ]
    if content_type.startswith("application/json"):
        try:
            body = json.loads(request.body)
        except ValueError:
            return []
        if isinstance(body, dict):
            return [name for name, value in body.items() if "\x00" in json.dumps(value, ensure_ascii=False)]
    return []
