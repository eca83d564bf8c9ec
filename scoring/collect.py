"""python -m scoring.collect SET.jsonl (--endpoint URL | --command CMD) --repetitions R --out RUN.jsonl

Asks an assistant every question of a question set, R times each, C at a
time, and writes the run log of spec 000 recipe 4.1 with the plan and timing
of spec 004: a header line, then one line per attempt, in set order and then
attempt order whatever order the answers arrive in.

The assistant is either an OpenAI-compatible chat endpoint (POST
URL/chat/completions with the question as the one user message; a key from
the environment variable --api-key-env, OPENAI_API_KEY by default, is sent
as a Bearer token when it is set) or a command, run once per attempt with the
question on its standard input (and REVIEWAPP_QUESTION_ID, REVIEWAPP_LANGUAGE
and REVIEWAPP_ATTEMPT in its environment). The command is split into words
as a shell would, but no shell runs it: wrap it in ``sh -c '...'`` for pipes.

What an answer carries (EVIDENCE_FIELD, "reviewapp"):

- from an endpoint, the answer is choices[0].message.content; the evidence
  is an optional top-level object beside "choices"::

      {"choices": [...], "reviewapp": {"retrieved_ids": ["X"], "retrieved_values": [7.6],
                                       "cited_ids": ["X"], "declined": false}}

  which may also give retrieved_records and tool_calls as the run log holds
  them (scoring.logfile, scoring.timing);
- from a command, standard output is the answer as plain text, or a JSON
  object with those fields at its top level and "answer" among them;
- without evidence, retrieved_ids, retrieved_values and cited_ids are empty
  and declined is false.

``--mapping MAP.json`` names where each field is in responses of another
shape, as dotted paths with list indices as numbers, for instance
{"answer": "output.text", "cited_ids": "output.citations"}. A mapped path
that a response lacks makes that attempt an error naming the path.

Each line records submitted_at and, for an answer, received_at (UTC, with the
time zone), and a status: "ok"; "timeout" when no answer came within
--timeout-s (the attempt's stopped_at is when it was given up); "error" for an
HTTP error, a response that is not JSON or lacks a field, a failing command;
"refused_quota" for HTTP 429; "cancelled" for attempts left unfinished by an
interruption. Attempts are never retried: a retry would be a new attempt.

Interrupting (Ctrl-C) stops sending at once and writes every unfinished
attempt as "cancelled" with status_reason "collection interrupted ...", so
the partial log is still a valid run log and says which attempts did not run.
The log is written as it goes, always as a valid prefix: even a run that is
killed leaves a file the app can read (its missing attempts simply not run).

Exit status: 0 when every attempt was answered, 1 when some failed or timed
out (the log is complete), 2 for bad usage or input (nothing sent), 130 when
interrupted (the partial log is written).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from scoring.logfile import (
    MAX_REPETITIONS,
    MAX_TIMEOUT_S,
    SET_FILE_NAME,
    ErrorCollector,
    LineError,
    answer_errors,
    encoding_problem,
    holds_nul,
    iter_lines,
    iter_questions,
    label_problem,
    parse_object,
    read_header,
)
from scoring.timing import STATUSES

EVIDENCE_FIELD = "reviewapp"
DEFAULT_ANSWER_PATH = "choices.0.message.content"
DEFAULT_TIMEOUT_S = 600
MAX_CONCURRENCY = 256

# What a reply may give, and the type each must have.
REPLY_FIELDS: dict[str, type] = {
    "answer": str,
    "retrieved_ids": list,
    "retrieved_values": list,
    "cited_ids": list,
    "declined": bool,
    "retrieved_records": list,
    "tool_calls": list,
}
_TYPE_NAMES = {str: "text", list: "a list", bool: "true or false"}

INTERRUPTED = "collection interrupted"
_NOT_SENT = f"{INTERRUPTED} before the question was sent"
_IN_FLIGHT = f"{INTERRUPTED} while waiting for the answer"

# How long the main loop sleeps at most between looks at Ctrl-C and deadlines.
_POLL_S = 0.1
# How often a command's process is checked for a deadline or a cancellation.
_COMMAND_POLL_S = 0.05
# The share of a response body quoted in a status reason.
_EXCERPT_CHARACTERS = 200
# A reachability check needs no more than this, whatever the attempts' timeout.
_CONNECT_CHECK_S = 10
# Bad lines of a question set listed before the rest are only counted.
MAX_LISTED_ERRORS = 20


class CollectError(Exception):
    """Collection cannot start: one sentence saying why (bad arguments,
    unreadable input, an unreachable endpoint, an existing output file)."""


class AttemptFailed(Exception):
    """One attempt ended without an answer: its ``status`` (error, timeout,
    refused_quota, cancelled) and ``reason``."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Reply:
    """What one attempt answered, with the evidence it was given."""

    answer: str
    retrieved_ids: list = field(default_factory=list)
    retrieved_values: list = field(default_factory=list)
    cited_ids: list = field(default_factory=list)
    declined: bool = False
    # retrieved_records and tool_calls, when the reply gives them.
    extras: dict = field(default_factory=dict)


class Assistant(Protocol):
    def ask(
        self, question: Mapping, *, attempt: int, timeout_s: float, cancelled: threading.Event
    ) -> Reply: ...

    def close(self) -> None: ...


# -- reading replies ---------------------------------------------------------


PathParts = tuple[str, ...]


def _split_path(path: str) -> PathParts:
    parts = tuple(path.split("."))
    if not path or any(not part for part in parts):
        raise ValueError(f"{path!r} is not a dotted path such as choices.0.message.content")
    return parts


def load_mapping(path: Path) -> dict[str, PathParts]:
    """The paths a mapping file names, by reply field.

    The file is a JSON object from field names (answer, retrieved_ids,
    retrieved_values, cited_ids, declined, retrieved_records, tool_calls) to
    dotted paths. Refuses, with CollectError, a file that cannot be read or
    is not such an object, an unknown field and a path that is not dotted."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise CollectError(f"{path}: cannot read the mapping ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CollectError(f"{path}: the mapping is not JSON ({error})") from None
    if not isinstance(value, dict) or not value:
        raise CollectError(f"{path}: the mapping must be a JSON object from reply fields to dotted paths")
    mapping = {}
    for name, dotted in value.items():
        if name not in REPLY_FIELDS:
            raise CollectError(
                f"{path}: the mapping names {name!r}, which is not one of {', '.join(REPLY_FIELDS)}"
            )
        if not isinstance(dotted, str):
            raise CollectError(f"{path}: the path of {name} must be text such as choices.0.message.content")
        try:
            mapping[name] = _split_path(dotted)
        except ValueError as error:
            raise CollectError(f"{path}: the path of {name}: {error}") from None
    return mapping


_ABSENT = object()


def _lookup(document: object, parts: PathParts) -> object:
    value = document
    for part in parts:
        if isinstance(value, dict):
            value = value.get(part, _ABSENT)
        elif isinstance(value, list) and part.isdigit():
            index = int(part)
            value = value[index] if index < len(value) else _ABSENT
        else:
            return _ABSENT
        if value is _ABSENT:
            return _ABSENT
    return value


@dataclass(frozen=True, slots=True)
class ReplyShape:
    """Where a reply's fields are in a JSON document: ``required`` paths make
    an attempt an error when missing, ``optional`` ones leave the field
    empty."""

    required: dict[str, PathParts]
    optional: dict[str, PathParts]

    def mapped(self, mapping: Mapping[str, PathParts]) -> ReplyShape:
        """This shape with the fields ``mapping`` names read from its paths, each required."""
        return ReplyShape(
            required={**self.required, **mapping},
            optional={name: parts for name, parts in self.optional.items() if name not in mapping},
        )


_EVIDENCE = tuple(name for name in REPLY_FIELDS if name != "answer")
CHAT_SHAPE = ReplyShape(
    required={"answer": _split_path(DEFAULT_ANSWER_PATH)},
    optional={name: (EVIDENCE_FIELD, name) for name in _EVIDENCE},
)
COMMAND_SHAPE = ReplyShape(required={"answer": ("answer",)}, optional={name: (name,) for name in _EVIDENCE})


def reply_from_document(document: object, shape: ReplyShape) -> Reply:
    """The reply a JSON document gives, read as ``shape`` says.

    Raises AttemptFailed (status "error") naming the path of a required field
    the document lacks or holds null at, and the field of a value of the
    wrong type (a list of ids holds text, a list of values numbers)."""
    if not isinstance(document, dict):
        raise AttemptFailed("error", f"the response is JSON {type(document).__name__}, not an object")
    if EVIDENCE_FIELD in document and not isinstance(document[EVIDENCE_FIELD], dict | None):
        raise AttemptFailed("error", f'the response\'s "{EVIDENCE_FIELD}" is not an object')
    given = {}
    for name, parts in shape.required.items():
        value = _lookup(document, parts)
        if value is _ABSENT or value is None:
            what = "has no" if value is _ABSENT else "has null at"
            raise AttemptFailed("error", f"the response {what} {'.'.join(parts)} (the {name})")
        given[name] = value
    for name, parts in shape.optional.items():
        value = _lookup(document, parts)
        if value is not _ABSENT and value is not None:
            given[name] = value
    for name, value in given.items():
        expected = REPLY_FIELDS[name]
        if type(value) is not expected:
            shown = json.dumps(value, ensure_ascii=False)[:60]
            raise AttemptFailed(
                "error", f"the response's {name} must be {_TYPE_NAMES[expected]}, not {shown}"
            )
    for name in ("retrieved_ids", "cited_ids"):
        if not all(isinstance(item, str) for item in given.get(name, ())):
            raise AttemptFailed("error", f"the response's {name} must be a list of text ids")
    if not all(_is_number(item) for item in given.get("retrieved_values", ())):
        raise AttemptFailed("error", "the response's retrieved_values must be a list of numbers")
    return Reply(
        answer=given["answer"],
        retrieved_ids=given.get("retrieved_ids", []),
        retrieved_values=given.get("retrieved_values", []),
        cited_ids=given.get("cited_ids", []),
        declined=given.get("declined", False),
        extras={name: given[name] for name in ("retrieved_records", "tool_calls") if name in given},
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text[:_EXCERPT_CHARACTERS] + ("…" if len(text) > _EXCERPT_CHARACTERS else "")


# -- assistants ----------------------------------------------------------------


class ChatEndpoint:
    """An OpenAI-compatible chat endpoint: each attempt is one POST to
    ``{url}/chat/completions`` (``url`` may already end with it)."""

    def __init__(
        self,
        *,
        url: str,
        model: str | None = None,
        api_key: str | None = None,
        mapping: Mapping[str, PathParts] | None = None,
    ):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise CollectError(f"the endpoint {url!r} is not an http:// or https:// URL")
        self.url = url
        base = url.rstrip("/")
        self.chat_url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self.model = model
        self._api_key = api_key or None
        self.shape = CHAT_SHAPE.mapped(mapping or {})

    def check_reachable(self, *, timeout_s: float) -> None:
        """Nothing when the endpoint's host accepts a connection; refuses,
        with CollectError naming the URL, one that is unknown, refuses or
        does not answer within ``timeout_s``."""
        parsed = urllib.parse.urlsplit(self.chat_url)
        host, port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
        proxy = urllib.request.getproxies().get(parsed.scheme)
        if proxy and not urllib.request.proxy_bypass(host):
            # urllib will connect to the proxy, not to the endpoint itself.
            proxied = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            host, port = proxied.hostname, proxied.port or 80
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                pass
        except socket.gaierror:
            reason = f"the host {host} is not known"
        except ConnectionRefusedError:
            reason = f"nothing accepts connections on {host} port {port}"
        except TimeoutError:
            reason = f"{host} port {port} did not answer within {timeout_s:g} s"
        except OSError as error:
            reason = error.strerror or str(error)
        else:
            return
        raise CollectError(f"cannot reach the endpoint {self.url}: {reason}")

    def ask(self, question: Mapping, *, attempt: int, timeout_s: float, cancelled: threading.Event) -> Reply:
        """The reply to ``question``'s text; raises AttemptFailed for an HTTP
        error (429 is "refused_quota"), a socket timeout, a response that is
        not JSON or lacks what the shape requires."""
        body = {"messages": [{"role": "user", "content": question["question"]}]}
        if self.model:
            body = {"model": self.model, **body}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            self.chat_url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise AttemptFailed(
                "refused_quota" if error.code == 429 else "error", _http_reason(error)
            ) from None
        except TimeoutError:
            raise AttemptFailed("timeout", f"no answer within the timeout of {timeout_s:g} s") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise AttemptFailed("timeout", f"no answer within the timeout of {timeout_s:g} s") from None
            raise AttemptFailed("error", f"cannot reach the endpoint {self.url}: {error.reason}") from None
        except (OSError, ValueError, http.client.HTTPException) as error:
            # A connection reset, a malformed status line, a body cut short.
            raise AttemptFailed("error", f"the connection failed: {error}") from None
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise AttemptFailed(
                "error", f"the response is not JSON ({error}): {_excerpt(raw.decode('utf-8', 'replace'))}"
            ) from None
        return reply_from_document(document, self.shape)

    def close(self) -> None:
        """Nothing to release: a request still in flight is abandoned with its thread."""


def _http_reason(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read().decode("utf-8", "replace")
    except OSError:
        text = ""
    try:
        message = json.loads(text)["error"]["message"]
    except (json.JSONDecodeError, KeyError, TypeError):
        message = text
    reason = f"HTTP {error.code} {error.reason}"
    return f"{reason}: {_excerpt(str(message))}" if str(message).strip() else reason


class CommandAssistant:
    """A command run once per attempt, the question's text on its standard
    input; its standard output is the answer (text, or a JSON object of the
    reply's fields)."""

    def __init__(self, *, command: str, mapping: Mapping[str, PathParts] | None = None):
        try:
            self.argv = shlex.split(command)
        except ValueError as error:
            raise CollectError(f"the command {command!r} cannot be split into words: {error}") from None
        if not self.argv:
            raise CollectError("the command is empty")
        if shutil.which(self.argv[0]) is None:
            raise CollectError(f"the command {self.argv[0]!r} was not found or is not executable")
        self.command = command
        self.mapping = dict(mapping or {})
        self.shape = COMMAND_SHAPE.mapped(self.mapping)
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()

    def ask(self, question: Mapping, *, attempt: int, timeout_s: float, cancelled: threading.Event) -> Reply:
        """The reply the command writes for ``question``; raises
        AttemptFailed when it runs past ``timeout_s`` or is cancelled (it is
        killed), exits with a failure, or writes what the shape refuses."""
        environment = {
            **os.environ,
            "REVIEWAPP_QUESTION_ID": question["question_id"],
            "REVIEWAPP_LANGUAGE": question["language"],
            "REVIEWAPP_ATTEMPT": str(attempt),
        }
        deadline = time.monotonic() + timeout_s
        process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            # Its own process group, so that killing it reaches what it started.
            start_new_session=os.name == "posix",
        )
        with self._lock:
            self._running.add(process)
        try:
            stdout, stderr, killed = self._wait(
                process, question["question"].encode("utf-8"), deadline, cancelled
            )
        finally:
            with self._lock:
                self._running.discard(process)
        if cancelled.is_set():
            raise AttemptFailed("cancelled", _IN_FLIGHT)
        if killed:
            raise AttemptFailed("timeout", f"no answer within the timeout of {timeout_s:g} s")
        if process.returncode != 0:
            last = stderr.decode("utf-8", "replace").strip().splitlines()
            how = (
                f"was killed by signal {-process.returncode}"
                if process.returncode < 0
                else f"exited with status {process.returncode}"
            )
            raise AttemptFailed("error", f"the command {how}" + (f": {_excerpt(last[-1])}" if last else ""))
        try:
            text = stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise AttemptFailed("error", "the command's output is not UTF-8 text") from None
        return self._reply(text)

    def _wait(
        self, process: subprocess.Popen, given: bytes, deadline: float, cancelled: threading.Event
    ) -> tuple[bytes, bytes, bool]:
        """The command's output and whether it was killed (at its deadline or
        on cancellation)."""
        while True:
            try:
                stdout, stderr = process.communicate(given, timeout=_COMMAND_POLL_S)
                return stdout, stderr, False
            except subprocess.TimeoutExpired:
                # communicate goes on writing what it was given; a second
                # input would be refused.
                given = None
                if cancelled.is_set() or time.monotonic() >= deadline:
                    _kill(process)
                    stdout, stderr = process.communicate()
                    return stdout, stderr, True

    def _reply(self, text: str) -> Reply:
        document = _ABSENT
        if text.lstrip().startswith("{"):
            try:
                document = json.loads(text)
            except json.JSONDecodeError:
                document = _ABSENT
        if isinstance(document, dict):
            return reply_from_document(document, self.shape)
        if self.mapping:
            raise AttemptFailed("error", "the command's output is not a JSON object, which the mapping needs")
        return Reply(answer=text.rstrip("\n"))

    def close(self) -> None:
        """Kills every command still running, so that none outlives the collection."""
        with self._lock:
            running = list(self._running)
        for process in running:
            _kill(process)


def _kill(process: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


# -- collecting ------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _line(
    question: Mapping,
    attempt: int,
    *,
    status: str,
    submitted: datetime | None,
    received: datetime | None = None,
    stopped: datetime | None = None,
    reason: str | None = None,
    reply: Reply | None = None,
) -> dict:
    line: dict = {
        "question_id": question["question_id"],
        "language": question["language"],
        "attempt": attempt,
        "status": status,
    }
    if reason is not None:
        line["status_reason"] = reason
    line["question"] = question["question"]
    if submitted is not None:
        line["submitted_at"] = _stamp(submitted)
    if received is not None:
        line["received_at"] = _stamp(received)
    if stopped is not None:
        line["stopped_at"] = _stamp(stopped)
    if reply is None:
        # No answer: it declined nothing, retrieved and cited nothing.
        line.update(answer=None, retrieved_ids=[], retrieved_values=[], cited_ids=[], declined=False)
        return line
    line.update(
        answer=reply.answer,
        retrieved_ids=reply.retrieved_ids,
        retrieved_values=reply.retrieved_values,
        cited_ids=reply.cited_ids,
        declined=reply.declined,
        **reply.extras,
    )
    return line


def _line_problem(line: dict, *, repetitions: int) -> str | None:
    """Why the app's reader would refuse ``line`` (None when it would not)."""
    errors = answer_errors(1, line, repetitions=repetitions)
    if errors:
        return "; ".join(
            f"{error.field}: {error.message}" if error.field else error.message for error in errors
        )
    if holds_nul(line):
        return "the response holds the NUL character (\\u0000), which cannot be stored"
    try:
        json.dumps(line, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the response holds text that is not valid Unicode (a lone surrogate)"
    return None


@dataclass(frozen=True, slots=True)
class _Job:
    question: Mapping
    attempt: int


@dataclass(slots=True)
class _InFlight:
    submitted: datetime
    deadline: float
    cancelled: threading.Event


@dataclass(frozen=True, slots=True)
class CollectSummary:
    """What a collection wrote to ``path``: ``attempts`` lines, counted by status."""

    path: Path
    attempts: int
    counts: dict[str, int]
    interrupted: bool = False

    @property
    def all_ok(self) -> bool:
        return self.counts.get("ok", 0) == self.attempts

    def describe(self) -> str:
        tally = ", ".join(f"{count} {status}" for status, count in self.counts.items() if count)
        return f"wrote {self.attempts} attempts to {self.path}: {tally}"


ProgressCallback = Callable[[int, int], None]


def collect(
    *,
    questions: Sequence[Mapping],
    assistant: Assistant,
    out: Path,
    assistant_version: str,
    set_version: str | None,
    repetitions: int,
    concurrency: int = 1,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
) -> CollectSummary:
    """Ask ``assistant`` each question ``repetitions`` times, ``concurrency``
    at a time, each attempt given up after ``timeout_s`` seconds, and write
    the run log to ``out``; return what was written.

    ``questions`` are normalised question-set records (scoring.logfile
    read_questions), each with its text in "question". ``progress`` hears
    (attempts done, attempts planned). Setting ``stop``, or Ctrl-C when this
    runs in the main thread, ends the collection early: unfinished attempts
    are written as "cancelled" and the summary says ``interrupted``.

    Refuses, with CollectError and before anything is sent: repetitions
    outside 1 to 100, concurrency outside 1 to 256, a timeout that is not a
    whole number of seconds from 1 to 86400, a version that is not a label,
    a question without text, and an ``out`` that exists (unless
    ``overwrite``) or whose folder does not."""
    _check_plan(
        questions=questions,
        assistant_version=assistant_version,
        set_version=set_version,
        repetitions=repetitions,
        concurrency=concurrency,
        timeout_s=timeout_s,
    )
    header = {"assistant_version": assistant_version}
    if set_version is not None:
        header["set_version"] = set_version
    header.update(repetitions=repetitions, timeout_s=timeout_s)
    if not out.parent.is_dir():
        raise CollectError(f"{out}: the folder {out.parent} does not exist")
    try:
        stream = open(out, "w" if overwrite else "x", encoding="utf-8")  # noqa: SIM115 - closed below
    except FileExistsError:
        raise CollectError(f"{out} already exists: choose another file or give --overwrite") from None
    except OSError as error:
        raise CollectError(f"{out}: cannot write it ({error.strerror or error})") from None
    stop = stop or threading.Event()
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        previous_handler = signal.getsignal(signal.SIGINT)
        # Ctrl-C only sets stop: an exception raised between any two
        # statements could cut a line in half or lose one, and the partial
        # log must stay valid.
        signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        with stream:
            stream.write(json.dumps(header, ensure_ascii=False) + "\n")
            stream.flush()
            run = _Collection(
                questions=questions,
                assistant=assistant,
                stream=stream,
                repetitions=repetitions,
                concurrency=concurrency,
                timeout_s=timeout_s,
                progress=progress,
                stop=stop,
            )
            return run.run(out)
    finally:
        assistant.close()
        if in_main_thread:
            # None: the handler was not set from Python; the default is the nearest.
            signal.signal(signal.SIGINT, previous_handler if previous_handler is not None else signal.SIG_DFL)


def _check_plan(
    *,
    questions: Sequence[Mapping],
    assistant_version: str,
    set_version: str | None,
    repetitions: int,
    concurrency: int,
    timeout_s: int,
) -> None:
    if type(repetitions) is not int or not 1 <= repetitions <= MAX_REPETITIONS:
        raise CollectError(
            f"repetitions must be a whole number from 1 to {MAX_REPETITIONS}, not {repetitions}"
        )
    if type(concurrency) is not int or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise CollectError(
            f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, not {concurrency}"
        )
    if type(timeout_s) is not int or not 1 <= timeout_s <= MAX_TIMEOUT_S:
        # The run log's header holds whole seconds (scoring.logfile.plan_from_header).
        raise CollectError(
            f"the timeout must be a whole number of seconds from 1 to {MAX_TIMEOUT_S}, not {timeout_s}"
        )
    if problem := label_problem(assistant_version):
        raise CollectError(f"the assistant version {problem}")
    if set_version is not None and (problem := label_problem(set_version)):
        raise CollectError(f"the set version {problem}")
    if not questions:
        raise CollectError("the question set holds no questions")
    without_text = [
        question["question_id"] for question in questions if not str(question.get("question") or "").strip()
    ]
    if without_text:
        shown = ", ".join(map(repr, without_text[:5])) + (" …" if len(without_text) > 5 else "")
        raise CollectError(f"{len(without_text)} questions have no text to ask (field question): {shown}")


class _Collection:
    """One run: dispatches attempts to threads, gives up on those past their
    deadline, and writes lines in set order as soon as each is next."""

    def __init__(
        self,
        *,
        questions: Sequence[Mapping],
        assistant: Assistant,
        stream,
        repetitions: int,
        concurrency: int,
        timeout_s: int,
        progress: ProgressCallback | None,
        stop: threading.Event,
    ):
        self.jobs = [
            _Job(question, attempt) for question in questions for attempt in range(1, repetitions + 1)
        ]
        self.assistant = assistant
        self.stream = stream
        self.repetitions = repetitions
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.progress = progress
        self.stop = stop
        self.lines: list[dict | None] = [None] * len(self.jobs)
        self.in_flight: dict[int, _InFlight] = {}
        self.results: queue.SimpleQueue[tuple[int, dict]] = queue.SimpleQueue()
        self.dispatched = 0
        self.written = 0
        self.done = 0

    def run(self, out: Path) -> CollectSummary:
        total = len(self.jobs)
        while self.done < total and not self.stop.is_set():
            while len(self.in_flight) < self.concurrency and self.dispatched < total:
                self._dispatch(self.dispatched)
                self.dispatched += 1
            self._wait_for_one()
            self._give_up_late_ones()
            self._write_ready()
            if self.progress:
                self.progress(self.done, total)
        interrupted = self.done < total
        if interrupted:
            self._cancel_the_rest()
            self._write_ready()
        counts = dict.fromkeys(STATUSES, 0)
        for line in self.lines:
            counts[line["status"]] += 1
        return CollectSummary(path=out, attempts=total, counts=counts, interrupted=interrupted)

    def _dispatch(self, index: int) -> None:
        job = self.jobs[index]
        cancelled = threading.Event()
        submitted = _now()
        self.in_flight[index] = _InFlight(submitted, time.monotonic() + self.timeout_s, cancelled)
        # Daemon threads: a request that hangs past its deadline is abandoned,
        # never waited for at exit.
        threading.Thread(
            target=self._attempt,
            args=(index, job, submitted, cancelled),
            name=f"collect-{index}",
            daemon=True,
        ).start()

    def _attempt(self, index: int, job: _Job, submitted: datetime, cancelled: threading.Event) -> None:
        try:
            reply = self.assistant.ask(
                job.question, attempt=job.attempt, timeout_s=self.timeout_s, cancelled=cancelled
            )
        except AttemptFailed as failure:
            line = _line(
                job.question,
                job.attempt,
                status=failure.status,
                submitted=submitted,
                stopped=max(_now(), submitted),
                reason=failure.reason,
            )
        except Exception as error:  # one attempt's failure must not end the run
            line = _line(
                job.question,
                job.attempt,
                status="error",
                submitted=submitted,
                stopped=max(_now(), submitted),
                reason=f"{type(error).__name__}: {error}",
            )
        else:
            received = max(_now(), submitted)
            line = _line(
                job.question, job.attempt, status="ok", submitted=submitted, received=received, reply=reply
            )
            if problem := _line_problem(line, repetitions=self.repetitions):
                line = _line(
                    job.question,
                    job.attempt,
                    status="error",
                    submitted=submitted,
                    stopped=received,
                    reason=f"the reply cannot be logged: {problem}",
                )
        self.results.put((index, line))

    def _wait_for_one(self) -> None:
        if not self.in_flight:
            return
        next_deadline = min(flight.deadline for flight in self.in_flight.values())
        wait = min(_POLL_S, max(0.0, next_deadline - time.monotonic()))
        try:
            index, line = self.results.get(timeout=wait)
        except queue.Empty:
            return
        self._record(index, line)
        # Take every other answer already waiting, without sleeping again.
        while True:
            try:
                index, line = self.results.get_nowait()
            except queue.Empty:
                return
            self._record(index, line)

    def _record(self, index: int, line: dict) -> None:
        # An answer that arrives after its attempt was given up on is not its result.
        if self.in_flight.pop(index, None) is not None:
            self.lines[index] = line
            self.done += 1

    def _give_up_late_ones(self) -> None:
        now = time.monotonic()
        for index, flight in list(self.in_flight.items()):
            if now >= flight.deadline:
                flight.cancelled.set()
                job = self.jobs[index]
                self.lines[index] = _line(
                    job.question,
                    job.attempt,
                    status="timeout",
                    submitted=flight.submitted,
                    stopped=max(_now(), flight.submitted),
                    reason=f"no answer within the timeout of {self.timeout_s} s",
                )
                del self.in_flight[index]
                self.done += 1

    def _cancel_the_rest(self) -> None:
        # Answers that arrived before the stop are kept as they are.
        while True:
            try:
                index, line = self.results.get_nowait()
            except queue.Empty:
                break
            self._record(index, line)
        stopped = _now()
        for index, job in enumerate(self.jobs):
            if self.lines[index] is not None:
                continue
            flight = self.in_flight.pop(index, None)
            if flight is not None:
                flight.cancelled.set()
                self.lines[index] = _line(
                    job.question,
                    job.attempt,
                    status="cancelled",
                    submitted=flight.submitted,
                    stopped=max(stopped, flight.submitted),
                    reason=_IN_FLIGHT,
                )
            else:
                self.lines[index] = _line(
                    job.question, job.attempt, status="cancelled", submitted=None, reason=_NOT_SENT
                )

    def _write_ready(self) -> None:
        wrote = False
        while self.written < len(self.lines) and self.lines[self.written] is not None:
            self.stream.write(json.dumps(self.lines[self.written], ensure_ascii=False) + "\n")
            self.written += 1
            wrote = True
        if wrote:
            self.stream.flush()


# -- command line ----------------------------------------------------------------


class ProgressBar:
    """done/total, rate and time left on one line of ``stream``, redrawn at
    most ten times a second."""

    WIDTH = 30

    def __init__(self, stream, *, clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.drawn_at: float | None = None
        self.last = ""

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and self.drawn_at is not None and now - self.drawn_at < 0.1:
            return
        self.drawn_at = now
        self.last = self.render(done, total, elapsed=now - self.started)
        self.stream.write("\r" + self.last)
        self.stream.flush()

    @classmethod
    def render(cls, done: int, total: int, *, elapsed: float) -> str:
        """The bar's text, such as ``[=======>      ]  12/40 attempts, 2.0/s, 14 s left``."""
        filled = cls.WIDTH * done // max(total, 1)
        bar = "=" * filled + (">" if filled < cls.WIDTH else "") + " " * (cls.WIDTH - filled - 1)
        text = f"[{bar}] {done:>{len(str(total))}}/{total} attempts"
        if done and elapsed > 0:
            rate = done / elapsed
            text += f", {rate:.1f}/s"
            if done < total:
                text += f", {_duration((total - done) / rate)} left"
        return text

    def finish(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        # One sentence, not argparse's usage dump.
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _whole(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number from {low} to {high}, not {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number from {low} to {high}, not {value}"
            )
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m scoring.collect",
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("questions", type=Path, metavar="SET.jsonl", help="question set, JSON Lines")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--endpoint", metavar="URL", help="OpenAI-compatible base URL, such as http://host/v1"
    )
    source.add_argument("--command", metavar="CMD", help="command run per attempt, the question on stdin")
    parser.add_argument("--model", metavar="NAME", help="model name sent to the endpoint")
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", metavar="VAR", help="environment variable holding the key"
    )
    parser.add_argument(
        "--repetitions",
        required=True,
        type=_whole(1, MAX_REPETITIONS, "--repetitions"),
        metavar="R",
        help="attempts per question (spec 004 suggests 3)",
    )
    parser.add_argument(
        "--concurrency",
        default=1,
        type=_whole(1, MAX_CONCURRENCY, "--concurrency"),
        metavar="C",
        help="attempts running at once (default 1)",
    )
    parser.add_argument(
        "--timeout-s",
        default=DEFAULT_TIMEOUT_S,
        type=_whole(1, MAX_TIMEOUT_S, "--timeout-s"),
        metavar="S",
        help=f"seconds an attempt may take, whole (default {DEFAULT_TIMEOUT_S})",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="RUN.jsonl",
        help="run log to write; in a folder, named answers_run_<assistant>_set-<set>.jsonl",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument(
        "--assistant-version", metavar="V", help="label the run is logged under (default: --model)"
    )
    parser.add_argument("--mapping", type=Path, metavar="MAP.json", help="dotted paths of fields in replies")
    parser.add_argument(
        "--progress", action="store_true", help="show progress even when stderr is no terminal"
    )
    return parser


def _say(message: str) -> None:
    print(f"python -m scoring.collect: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status (0 all answered, 1 some
    attempts failed, 2 bad usage or input, 130 interrupted)."""
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except CollectError as error:
        _say(str(error))
        return 2
    except KeyboardInterrupt:
        _say("interrupted before any question was sent; nothing was written")
        return 130


def _main(args: argparse.Namespace) -> int:
    questions, set_version = _read_set(args.questions)
    assistant_version = args.assistant_version or args.model
    if not assistant_version:
        raise CollectError("give --assistant-version, the label the run is logged under (or --model)")
    if problem := label_problem(assistant_version):
        flag = "--assistant-version" if args.assistant_version else "--model (give --assistant-version)"
        raise CollectError(f"{flag}: {problem}")
    mapping = load_mapping(args.mapping) if args.mapping else None
    out = args.out
    if out.is_dir():
        out = out / f"answers_run_{assistant_version}_set-{set_version or 'unknown'}.jsonl"
    if out.exists() and out.resolve() == args.questions.resolve():
        raise CollectError(f"{out} is the question set: write the run log to another file")
    if out.exists() and not args.overwrite:
        raise CollectError(f"{out} already exists: choose another file or give --overwrite")
    if args.endpoint:
        endpoint = ChatEndpoint(
            url=args.endpoint, model=args.model, api_key=os.environ.get(args.api_key_env), mapping=mapping
        )
        endpoint.check_reachable(timeout_s=min(args.timeout_s, _CONNECT_CHECK_S))
        assistant: Assistant = endpoint
    else:
        assistant = CommandAssistant(command=args.command, mapping=mapping)
    if set_version is None:
        _say(f"{args.questions} names no set_version: the run log's header leaves it out")
    bar = ProgressBar(sys.stderr) if args.progress or sys.stderr.isatty() else None
    try:
        summary = collect(
            questions=questions,
            assistant=assistant,
            out=out,
            assistant_version=assistant_version,
            set_version=set_version,
            repetitions=args.repetitions,
            concurrency=args.concurrency,
            timeout_s=args.timeout_s,
            overwrite=args.overwrite,
            progress=bar,
        )
    except OSError as error:
        raise CollectError(f"{out}: writing the run log failed ({error.strerror or error})") from None
    finally:
        if bar:
            bar.finish()
    if summary.interrupted:
        cancelled = summary.counts.get("cancelled", 0)
        _say(
            f"interrupted: {out} is a partial run log, its {cancelled} unfinished attempts written with "
            f'status "cancelled" ({INTERRUPTED})'
        )
        return 130
    print(summary.describe())
    return 0 if summary.all_ok else 1


def _read_set(path: Path) -> tuple[list[dict], str | None]:
    """The questions of a set file and its set_version (from its header, or
    else its file name); refuses, with CollectError, a file that cannot be
    read and one with bad lines or questions without text, naming each line."""
    if not path.is_file():
        raise CollectError(f"{path}: no such file")
    try:
        with open(path, "rb") as stream:
            head = stream.read(4096)
    except OSError as error:
        raise CollectError(f"{path}: cannot read it ({error.strerror or error})") from None
    if problem := encoding_problem(head):
        raise CollectError(f"{path}: {problem}")
    collector = ErrorCollector(MAX_LISTED_ERRORS)
    questions = list(iter_questions(path, collector))
    without_text = {question["question_id"] for question in questions if not question["question"].strip()}
    if without_text:
        # Normalised questions no longer know their lines; the file does.
        collector.add(
            LineError(number, "question", "no question text to ask: give the question in the field question")
            for number, question_id in _first_lines(path)
            if question_id in without_text
        )
    if collector.total:
        errors = sorted(collector.errors, key=lambda error: error.line)
        raise CollectError(_listed_errors(path, errors, collector.total))
    header = read_header(path)
    set_version = header.get("set_version")
    if not isinstance(set_version, str):
        named = SET_FILE_NAME.match(path.name)
        set_version = named["set_version"] if named else None
    if set_version is not None and (problem := label_problem(set_version)):
        raise CollectError(f"{path}: the set_version {problem}")
    return questions, set_version


def _first_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line, question id) of the first line giving each id."""
    seen = set()
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream):
            record, _ = parse_object(number, text)
            question_id = record.get("question_id") if record is not None else None
            if isinstance(question_id, str) and question_id not in seen:
                seen.add(question_id)
                yield number, question_id


def _listed_errors(path: Path, errors: list[LineError], total: int) -> str:
    lines = [f"{path} has {total} {'problem' if total == 1 else 'problems'}:"]
    lines += [f"  {error}" for error in errors]
    if total > len(errors):
        lines.append(f"  … and {total - len(errors)} more")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
