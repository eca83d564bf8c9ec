"""The assistants a collection asks: an OpenAI-compatible chat endpoint, or a
command run once per attempt with the question on its standard input."""

from __future__ import annotations

import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

from scoring.collect.replies import (
    _ABSENT,
    _COMMAND_POLL_S,
    _IN_FLIGHT,
    CHAT_SHAPE,
    COMMAND_SHAPE,
    AttemptFailed,
    CollectError,
    PathParts,
    Reply,
    _excerpt,
    reply_from_document,
)

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
