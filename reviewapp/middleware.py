"""Refusing an upload that says it is too large before reading a byte of it."""

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from reviewapp.services.uploads import limit_text

# Room for the form fields and multipart framing around the file itself.
ENVELOPE_BYTES = 1024 * 1024


class UploadLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and self._declared(request) > settings.MAX_UPLOAD_BYTES + ENVELOPE_BYTES:
            message = f"the file is larger than the limit of {limit_text()}"
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": "the upload was refused", "errors": [message]}, status=413)
            body = render_to_string("too_large.html", {"message": message}, request=request)
            return HttpResponse(body, status=413)
        return self.get_response(request)

    @staticmethod
    def _declared(request) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0
