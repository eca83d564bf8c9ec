"""Refusing an upload that says it is too large, or does not say how large
it is, before reading a byte of it."""

from django.conf import settings
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
