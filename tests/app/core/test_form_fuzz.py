"""Every form field, sent what a careless user or an attacker sends, answers
without a server error (issue 31: "a fuzz of every form field finds no 5xx").

The demo's data are loaded, and each role walks the pages its links reach,
as a person clicking through would. Every POST form found there is sent
back once as the page filled it, and then once for each of its fields and
each hostile value, the other fields as the page filled them, so that a bad
value reaches the code behind a form that would otherwise take it. Those
requests are rolled back, so that one does not change what the next finds;
the form as filled is kept, and where it leads walked, as a person would go
on from it.
schemathesis does the same for the pipeline API (test_api_schemathesis.py).
"""

from __future__ import annotations

import io
import re
import traceback
from collections import defaultdict
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import transaction
from django.test import Client
from django.urls import Resolver404, resolve

from tests.conftest import SHARED_DATA

# What a text box, a number or a hidden key is sent: empty, NUL, far too
# long, negative, numbers a float or a column cannot hold, JSON nested past any use,
# a value given twice.
TEXT_VALUES = (
    "",
    "a\x00b",
    "x" * 20_000,
    "-1",
    "1e309",
    "NaN",
    "99999999999999999999999999",
    '{"a":' * 60 + "1" + "}" * 60,
    ["1", "2"],
)
# What a choice (select, radio, checkbox) is sent besides its options.
CHOICE_VALUES = ("", "\x00", "not-an-option", "99999999999999999999999999", ["a", "b"])
FILE_VALUES = (
    ("empty.jsonl", b""),
    ("nul.jsonl", b"\x00" * 64),
    ("not-utf8.jsonl", b'{"question_id": "\xff\xfe"}\n'),
    ("deep.json", b"[" * 5000 + b"]" * 5000),
    ("deep.jsonl", b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n"),
    ("\x00name.csv", b"a,b\n1,2\n"),
)
# What a file field is sent when it is not the field being tried: the spec's running example.
RUNNING_EXAMPLE = SHARED_DATA / "running_example.jsonl"
# Pages to walk at most per URL name (the demo's many answers share one page's forms).
PAGES_PER_NAME = 2
# Leaving or deleting the session would end the walk; the admin site is Django's own.
SKIPPED_PREFIXES = ("/admin/", "/logout/", "/static/")


class Forms(HTMLParser):
    """The POST forms of a page and the links on it."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self.links: list[str] = []
        self._form = None
        self._textarea = None
        self._select = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "form":
            method = (attrs.get("method") or "get").lower()
            action = attrs.get("hx-post") or attrs.get("action") or ""
            self._form = {
                "action": action,
                "post": method == "post" or "hx-post" in attrs,
                "htmx": "hx-post" in attrs,
                "fields": {},
            }
            self.forms.append(self._form)
        if self._form is None:
            return
        name = attrs.get("name")
        if tag == "button" and name:
            self._option(name, attrs.get("value", ""), chosen=name not in self._form["fields"])
        if tag == "input" and name:
            kind = (attrs.get("type") or "text").lower()
            if kind in ("submit", "button", "image", "reset"):
                self._option(name, attrs.get("value", ""), chosen=name not in self._form["fields"])
            elif kind in ("checkbox", "radio"):
                self._option(name, attrs.get("value", "on"), chosen="checked" in attrs)
            elif kind == "file":
                self._form["fields"].setdefault(name, {"kind": "file"})
            else:
                self._form["fields"].setdefault(name, {"kind": kind, "value": attrs.get("value", "")})
        if tag == "textarea" and name:
            self._textarea = name
            self._form["fields"].setdefault(name, {"kind": "text", "value": ""})
        if tag == "select" and name:
            self._select = name
            self._form["fields"].setdefault(name, {"kind": "choice", "value": "", "options": []})
        if tag == "option" and self._select:
            self._option(self._select, attrs.get("value", ""), chosen="selected" in attrs)

    def handle_data(self, data):
        if self._form is not None and self._textarea:
            self._form["fields"][self._textarea]["value"] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        if tag == "select":
            self._select = None
        if tag == "form":
            self._form = None

    def _option(self, name: str, value: str, chosen: bool):
        """One option of a choice (a select's option, a radio, a checkbox, a named button)."""
        field = self._form["fields"].setdefault(name, {"kind": "choice", "value": "", "options": []})
        field["options"].append(value)
        if chosen:
            field["value"] = value


def defaults(form: dict, fill: bool = False) -> dict:
    """The form as the page filled it; with ``fill``, as a person goes on
    with it: a name or a number where the page gave nothing, the first option
    where none was chosen."""
    data = {}
    for name, field in form["fields"].items():
        if field["kind"] == "file":
            data[name] = SimpleUploadedFile(RUNNING_EXAMPLE.name, RUNNING_EXAMPLE.read_bytes())
        elif field["value"] or not fill:
            data[name] = field["value"]
        elif field["kind"] == "choice":
            data[name] = next((option for option in field["options"] if option), "")
        else:
            data[name] = "1" if field["kind"] == "number" else f"fuzz {len(data)}"
    return data


def shape(name: str) -> str:
    """A field's name with its numbers blanked: a row's checkbox stands for every row's."""
    return re.sub(r"\d+", "#", name)


def variants(form: dict):
    """(what changed, the data to send) for each hostile value of each kind of field."""
    shapes = set()
    for name, field in form["fields"].items():
        if name == "csrfmiddlewaretoken" or shape(name) in shapes:
            continue
        shapes.add(shape(name))
        data = defaults(form)
        data.pop(name, None)
        yield f"{name} left out", data
        if field["kind"] == "file":
            for file_name, content in FILE_VALUES:
                yield (
                    f"{name}={file_name!r}",
                    {**defaults(form), name: SimpleUploadedFile(file_name, content)},
                )
            continue
        for value in CHOICE_VALUES if field["kind"] == "choice" else TEXT_VALUES:  # number, date, text…
            yield f"{name}={str(value)[:40]!r}", {**defaults(form), name: value}


class Walk:
    def __init__(self, client: Client):
        self.client = client
        self.failures: list[str] = []
        self.waiting = ["/"]
        # Where a kept form led: walked again whatever was walked before,
        # since the form changed what the page shows (a new token, a sample).
        self.led_to: list[str] = []

    def send(self, method: str, url: str, data=None, what: str = "", keep=False, **headers):
        """The response, or None after a server error; rolled back, so that
        nothing it wrote stays, unless ``keep``."""
        cookies = {name: morsel.value for name, morsel in self.client.cookies.items()}
        try:
            with transaction.atomic():
                response = getattr(self.client, method)(url, data or {}, **headers)
                if response.streaming:
                    b"".join(response.streaming_content)
                transaction.set_rollback(not keep)
        except Exception:
            self.failures.append(f"{what}{method.upper()} {url}: raised\n{traceback.format_exc(limit=-4)}")
            return None
        finally:
            for name, value in cookies.items():
                self.client.cookies[name] = value
        if response.status_code >= 500:
            self.failures.append(f"{what}{method.upper()} {url}: {response.status_code}")
            return None
        return response

    def pages(self):
        """Each page the links reach from the home page, at most
        PAGES_PER_NAME of a URL name, and every page a kept form led to."""
        seen, per_name, waiting = set(), defaultdict(int), self.waiting
        while waiting or self.led_to:
            led = bool(self.led_to)
            url = self.led_to.pop(0) if led else waiting.pop(0)
            path = urlsplit(url).path
            if (url in seen and not led) or path.startswith(SKIPPED_PREFIXES):
                continue
            seen.add(url)
            try:
                name = resolve(path).view_name
            except Resolver404:
                continue
            if per_name[name] >= PAGES_PER_NAME and not led:
                continue
            per_name[name] += 1
            response = self.send("get", url)
            if response is not None and response.status_code in (301, 302, 303):
                waiting.append(response["Location"])
            if response is None or response.status_code != 200 or response.streaming:
                continue
            if not response.get("Content-Type", "").startswith("text/html"):
                continue
            parser = Forms()
            parser.feed(response.content.decode())
            for link in parser.links:
                target = urljoin(url, link)
                if target.startswith("/") and not target.startswith("//"):
                    waiting.append(target.split("#")[0])
            yield url, parser.forms


@pytest.mark.django_db(transaction=True)
def test_no_form_field_a_role_reaches_gives_a_server_error():
    call_command("demo", answers=60, stdout=io.StringIO())
    users = get_user_model().objects
    # Each role sends each form it reaches as the page filled it; the
    # hostile values are sent once, by the first role that reaches the form.
    fuzzed, fields_sent, failures = set(), 0, []
    for username in ("lead", "reviewer", "manager", "admin"):
        client = Client()
        client.force_login(users.get(username=username))
        walk, sent = Walk(client), set()
        for page, forms in walk.pages():
            for form in (form for form in forms if form["post"]):
                action = urljoin(page, form["action"] or page)
                if urlsplit(action).path.startswith(SKIPPED_PREFIXES):
                    continue
                key = (resolve(urlsplit(action).path).view_name, frozenset(map(shape, form["fields"])))
                if key in sent:
                    continue
                sent.add(key)
                # As htmx, rolled back; then plain and kept, so that the
                # next step of a flow (an upload's confirmation, a draw's
                # sample, a reviewer's screen) is walked where it leads.
                walk.send("post", action, defaults(form), what=f"{username}: ", HTTP_HX_REQUEST="true")
                response = walk.send(
                    "post", action, defaults(form, fill=True), what=f"{username}: ", keep=True
                )
                if response is not None and response.status_code in (301, 302, 303):
                    walk.led_to.append(response["Location"])
                if key in fuzzed:
                    continue
                fuzzed.add(key)
                fields_sent += len(form["fields"])
                for change, data in variants(form):
                    headers = {"HTTP_HX_REQUEST": "true"} if form["htmx"] else {}
                    walk.send("post", action, data, what=f"{username}, {change}: ", **headers)
        failures += walk.failures
    # The walk reached the forms people work in, not only the login page.
    views = {view for view, _ in fuzzed}
    assert {"review-item", "rubric-edit", "run-upload", "sample-new", "severity", "token-list"} <= views, (
        views
    )
    assert fields_sent > 100
    assert failures == [], "\n\n".join(failures[:20]) + f"\n\n({len(failures)} in all)"
