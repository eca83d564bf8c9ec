"""Walking every page and API read a user can reach, for the blinding tests."""

from __future__ import annotations

import copy
import itertools

from django.db import transaction
from django.urls import reverse

from reviewapp.api import api
from tests.app.core.test_permissions import is_api_operation, url_patterns


class PageCrawl:
    """For a TestCase whose ``arguments()`` gives the values each URL argument takes."""

    def request(self, method: str, url: str, data=None, **headers):
        """The response and its text (headers included), rolled back so a POST changes nothing after it."""
        cookies = copy.deepcopy(self.client.cookies)
        with transaction.atomic():
            response = getattr(self.client, method.lower())(url, data or {}, **headers)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            transaction.set_rollback(True)
        self.client.cookies = cookies
        headers_text = "\n".join(f"{name}: {value}" for name, value in response.items())
        return response, headers_text + "\n" + body.decode(errors="replace")

    def urls(self) -> list[tuple[str, str]]:
        """(URL name, URL) for every page of reviewapp.urls, with every combination of its arguments."""
        arguments = self.arguments()
        urls, missing = [], []
        for name, route, pattern in url_patterns():
            if name.startswith("admin:") or is_api_operation(pattern):
                continue  # the admin site is for staff only; the API is walked from its schema below
            keys = list(pattern.pattern.regex.groupindex)
            if any(key not in arguments for key in keys):
                missing.append(f"{name} at /{route}: give its arguments values in arguments()")
                continue
            for values in itertools.product(*(arguments[key] for key in keys)):
                urls.append((name, reverse(name, kwargs=dict(zip(keys, values, strict=True)))))
        self.assertEqual(missing, [])
        for path, methods in api.get_openapi_schema()["paths"].items():
            for method, operation in methods.items():
                if method == "get":
                    url = path.format(**{key: values[0] for key, values in arguments.items()})
                    urls.append((operation["operationId"], url))
        return urls
