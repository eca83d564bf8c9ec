"""Simulated reviewers and managers for the load test; bench/run_load.py runs them.

ReviewerUser logs in once through /login/, opens its queue and its next open
item, then keeps doing what the review screen does with htmx: it posts a
judgement with the page's one-time submission key and CSRF token, and reads
the next item (the partial the POST answers with) to judge that one next.
ManagerUser logs in once and keeps reading the 1M-answer version's dashboard.

Every user waits at a gate once it is logged in. When the last one arrives
they set off, spread over one pause; once all are going, the statistics are
reset and the measured window (--measure-seconds) opens, so logging in
(deliberately slow password hashing), the first page loads and the start
stay out of the figures. When the window closes, the test stops.

Requests go to 127.0.0.1 only, in plain HTTP, as they reach gunicorn from the
TLS proxy in front of a production deployment: with X-Forwarded-Proto, with
the session and CSRF cookies (which production marks Secure: the browser sent
them over TLS to the proxy), and with the Origin and Referer a browser sends
with a form, since production settings check them.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass, field
from http.cookiejar import DefaultCookiePolicy
from urllib.parse import urlparse

import gevent
import load_config as config
import load_cpu
from gevent.event import Event
from locust import FastHttpUser, events, task
from locust.exception import StopUser

ACTION = re.compile(r'hx-post="(/review/\d+/[^/"]+/)"')
SUBMISSION_KEY = re.compile(r'name="submission_key" value="([^"]+)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
RUBRIC_ANSWER = re.compile(r'name="(q_[^"]+)" value="(yes|no|na)"')
ERROR_KIND = re.compile(r'<option value="([a-z_]+)"')
# A sample in the queue with items left to judge.
OPEN_SAMPLE = re.compile(r'href="(/review/\d+/)">continue')


@events.init_command_line_parser.add_listener
def _arguments(parser):
    parser.add_argument("--measure-seconds", type=float, default=120, help="length of the measured window")
    parser.add_argument("--think-min", type=float, default=1.0, help="shortest pause between requests, s")
    parser.add_argument("--think-max", type=float, default=3.0, help="longest pause between requests, s")
    parser.add_argument("--summary-file", default="", help="JSON: window, users through the gate, errors")
    parser.add_argument("--server-pid", type=int, default=0, help="gunicorn's master, for the CPU split")


@dataclass
class Gate:
    """Holds each logged-in user until all are, then opens the measured window."""

    opened: Event = field(default_factory=Event)
    arrived: int = 0
    logged_in: int = 0
    login_failures: list[str] = field(default_factory=list)
    not_ready: list[str] = field(default_factory=list)  # logged in, but found nothing to do
    window: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    tracker: load_cpu.Tracker | None = None

    def arrive(self, environment) -> None:
        """Wait here until every user has logged in; then let them go in a
        spread over one pause (people do not all click in the same
        millisecond) and open the window once the last has started."""
        options = environment.parsed_options
        self.arrived += 1
        if self.arrived >= options.num_users and not self.opened.is_set():
            if self.login_failures or self.not_ready:
                # A user who could not log in or found no item fails the
                # test: stop at once rather than measure fewer users.
                gevent.spawn(self.close, environment)
            else:
                gevent.spawn_later(options.think_max, self.begin, environment)
            self.opened.set()
        self.opened.wait()
        gevent.sleep(random.uniform(0, options.think_max))

    def begin(self, environment) -> None:
        environment.runner.stats.reset_all()
        self.window.append(time.time())
        self.track(environment)
        gevent.spawn_later(environment.parsed_options.measure_seconds, self.close, environment)

    def close(self, environment) -> None:
        self.window.append(time.time())
        if self.tracker is not None and len(self.window) == 2:
            self.cpu = self.tracker.stop(self.window[1] - self.window[0])
            self.tracker = None
        environment.runner.quit()

    def track(self, environment) -> None:
        pid = environment.parsed_options.server_pid
        if not pid:
            return
        self.tracker = load_cpu.Tracker(gunicorn_pid=pid, database=config.DATABASE)
        self.tracker.start()

        def keep_looking():
            while self.tracker is not None:
                self.tracker.look()
                gevent.sleep(1)

        gevent.spawn(keep_looking)


GATE = Gate()
ACCOUNTS = {"ReviewerUser": iter(config.REVIEWERS), "ManagerUser": iter(config.MANAGERS)}


@events.quitting.add_listener
def _summary(environment, **kwargs):
    options = environment.parsed_options
    if GATE.login_failures or GATE.not_ready:
        environment.process_exit_code = 1
    if not options.summary_file:
        return
    started, ended = [*GATE.window, time.time()][:2] if GATE.window else (None, None)
    with open(options.summary_file, "w") as out:
        json.dump(
            {
                "users": options.num_users,
                "logged_in": GATE.logged_in,
                "login_failures": GATE.login_failures,
                "not_ready": GATE.not_ready,
                "window_start": started,
                "window_seconds": (ended - started) if started else 0.0,
                "think_seconds": [options.think_min, options.think_max],
                "cores": GATE.cpu,
            },
            out,
            indent=2,
        )


class BehindProxy(DefaultCookiePolicy):
    """Send Secure cookies on the plain loopback leg: the browser sent them
    over TLS to the proxy, which forwards them to gunicorn as they are."""

    def return_ok_secure(self, cookie, request) -> bool:
        return True


class LoggedInUser(FastHttpUser):
    abstract = True
    host = config.HOST

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.client.cookiejar.set_policy(BehindProxy())

    def wait_time(self) -> float:
        options = self.environment.parsed_options
        return random.uniform(options.think_min, options.think_max)

    def on_start(self) -> None:
        if urlparse(self.host).hostname != "127.0.0.1":
            raise StopUser()
        self.username = next(ACCOUNTS[type(self).__name__])
        try:
            ready = self.log_in() and self.prepare()
        finally:
            GATE.arrive(self.environment)
        if not ready:
            raise StopUser()

    def prepare(self) -> bool:
        return True

    def headers(self, *, post_from: str | None = None) -> dict[str, str]:
        headers = {"X-Forwarded-Proto": "https"}
        if post_from is not None:
            headers.update(Origin=config.PUBLIC_ORIGIN, Referer=config.PUBLIC_ORIGIN + post_from)
        return headers

    def log_in(self) -> bool:
        """One login through the form, with the right password, as a person would."""
        form = self.client.get("/login/", headers=self.headers(), name="login form")
        token = CSRF.search(form.text or "")
        if token is None:
            GATE.login_failures.append(f"{self.username}: no login form ({form.status_code})")
            return False
        with self.client.post(
            "/login/",
            data={"username": self.username, "password": config.PASSWORD, "csrfmiddlewaretoken": token[1]},
            headers=self.headers(post_from="/login/"),
            allow_redirects=False,
            name="login",
            catch_response=True,
        ) as response:
            if response.status_code != 302:
                response.failure(f"login answered {response.status_code}")
                GATE.login_failures.append(f"{self.username}: login answered {response.status_code}")
                return False
        GATE.logged_in += 1
        return True


@dataclass
class ReviewForm:
    action: str
    submission_key: str
    csrf: str
    rubric: dict[str, list[str]]
    error_kinds: list[str]


def review_form(html: str) -> ReviewForm | None:
    """The judgement form of an item page or partial, or None when there is none."""
    action, key, csrf = ACTION.search(html), SUBMISSION_KEY.search(html), CSRF.search(html)
    if not (action and key and csrf):
        return None
    rubric: dict[str, list[str]] = {}
    for name, value in RUBRIC_ANSWER.findall(html):
        rubric.setdefault(name, []).append(value)
    return ReviewForm(action[1], key[1], csrf[1], rubric, ERROR_KIND.findall(html))


class ReviewerUser(LoggedInUser):
    """A reader working through their queue on the review screen."""

    def prepare(self) -> bool:
        queue = self.client.get("/review/", headers=self.headers(), name="queue")
        link = OPEN_SAMPLE.search(queue.text or "")
        if link is None:
            GATE.not_ready.append(f"{self.username}: nothing in the queue")
            return False
        # The sample's link redirects to the reader's next open item.
        page = self.client.get(link[1], headers=self.headers(), name="first item")
        self.form = review_form(page.text or "")
        if self.form is None:
            GATE.not_ready.append(f"{self.username}: no item to judge")
        return self.form is not None

    def judgement(self) -> dict[str, str]:
        form = self.form
        grade = random.choices(
            ("resolved", "partially_resolved", "unresolved", "material_error"), weights=(7, 1, 1, 1)
        )[0]
        data = {
            "csrfmiddlewaretoken": form.csrf,
            "submission_key": form.submission_key,
            "addresses_question": "yes",
            "grade": grade,
            # Every grade but resolved needs its reason, as the form says; a
            # resolved one carries a note now and then.
            "note": (
                "the period's figure differs from the record's"
                if grade != "resolved"
                else ("checked against the records" if random.random() < 0.2 else "")
            ),
        }
        for name, values in form.rubric.items():
            data[name] = random.choices(values, weights=[8 if v == "yes" else 1 for v in values])[0]
        if random.random() < 0.05:
            data["borderline"] = "on"
        if grade == "material_error":
            data.update(
                error_claim="the figure given for the period",
                error_evidence="the retrieved record holds another value",
                error_effect="the user would quote a wrong figure",
                error_kind=random.choice(form.error_kinds),
            )
        return data

    @task
    def submit_and_open_next(self) -> None:
        if self.form is None:
            raise StopUser()
        headers = self.headers(post_from=self.form.action)
        headers.update(
            {
                "HX-Request": "true",
                "HX-Target": "review-screen",
                "HX-Current-URL": config.PUBLIC_ORIGIN + self.form.action,
                "X-CSRFToken": self.form.csrf,
            }
        )
        with self.client.post(
            self.form.action, data=self.judgement(), headers=headers, name=config.SUBMIT, catch_response=True
        ) as response:
            if response.status_code != 200:
                return  # a failure already, with its status
            if response.headers.get("HX-Redirect"):
                # Only when the reader has judged every item: the queue was too short.
                response.failure("the reader ran out of items")
                self.form = None
                return
            html = response.text or ""
            if 'role="alert"' in html:
                # htmx gets the same item back, with the form's errors, as a 200.
                response.failure("the judgement was refused")
                return
            following = review_form(html)
            if following is None or not response.headers.get("HX-Push-Url"):
                response.failure("the answer held no next item")
                return
            if following.action == self.form.action:
                response.failure("the same item came back")
                return
            self.form = following


class ManagerUser(LoggedInUser):
    """A manager reading the 1M-answer version's dashboard."""

    @task
    def dashboard(self) -> None:
        with self.client.get(
            f"/versions/{config.ASSISTANT_VERSION}/",
            headers=self.headers(),
            name=config.DASHBOARD,
            catch_response=True,
        ) as response:
            if response.status_code == 200 and config.ASSISTANT_VERSION not in (response.text or ""):
                response.failure("the dashboard did not name its version")
