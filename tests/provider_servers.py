"""A local stand-in for the OpenAI, Anthropic and Gemini HTTP APIs.

The real SDKs are pointed at it, so the tests see exactly what goes over the
wire. It records every request (path, headers, JSON body) and answers from a
script: a list of replies, one a request, in order.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
# The genai SDK puts its API version (v1 by default, v1beta when asked) before the model.
GEMINI_PATH = re.compile(r"^/v1(beta)?/models/[^/:]+:generateContent$")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. A dict body is sent as JSON, a str body as it is."""

    status: int = 200
    body: dict | str = field(default_factory=dict)
    headers: dict = field(default_factory=dict)
    # Seconds to wait before answering: longer than the client's timeout makes a timeout.
    delay_s: float = 0.0


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict
    body: object


# Replies in each provider's wire format, in the shapes the installed SDKs
# parse (openai/types/chat/chat_completion.py, anthropic/types/message.py,
# google/genai/types.py GenerateContentResponse).


def openai_completion(
    text: str = "a verdict",
    *,
    finish_reason: str = "stop",
    prompt_tokens: int = 11,
    completion_tokens: int = 3,
    refusal: str | None = None,
) -> Reply:
    """A chat completion with one choice and usage."""
    message = {"role": "assistant", "content": None if refusal else text}
    if refusal:
        message["refusal"] = refusal
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def anthropic_message(
    text: str = "a verdict",
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 13,
    output_tokens: int = 4,
) -> Reply:
    """A Messages API message made of two text blocks (they are joined) and usage."""
    half = len(text) // 2
    return Reply(
        body={
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": text[:half]}, {"type": "text", "text": text[half:]}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def gemini_response(
    text: str = "a verdict",
    *,
    finish_reason: str = "STOP",
    prompt_tokens: int = 17,
    candidates_tokens: int = 5,
    block_reason: str | None = None,
) -> Reply:
    """A generateContent response with one candidate, or a blocked prompt with none."""
    usage = {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": candidates_tokens,
        "totalTokenCount": prompt_tokens + candidates_tokens,
    }
    if block_reason:
        return Reply(body={"promptFeedback": {"blockReason": block_reason}, "usageMetadata": usage})
    return Reply(
        body={
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": finish_reason,
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": "gemini-test",
        }
    )


def error_reply(provider: str, status: int, message: str, headers: dict | None = None) -> Reply:
    """An error in ``provider``'s error format."""
    if provider == "openai":
        body = {"error": {"message": message, "type": "test_error", "param": None, "code": None}}
    elif provider == "anthropic":
        kind = "overloaded_error" if status == 529 else "test_error"
        body = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"code": status, "message": message, "status": "TEST_STATUS"}}
    return Reply(status=status, body=body, headers=headers or {})


def malformed_reply() -> Reply:
    """A 200 that says it is JSON and is not."""
    return Reply(body='{"choices": [', headers={"Content-Type": "application/json"})


class ProviderServer:
    """A threaded HTTP server on 127.0.0.1 that answers from ``script`` and records requests.

    Use as a context manager; ``url`` is its base URL. A request beyond the
    script gets a 500 saying so, which a test sees as a failure to retry.
    """

    def __init__(self, script: list[Reply] | None = None):
        self.script = list(script or [])
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        # A short poll interval: shutdown() waits for the loop to look, once a test ends.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> ProviderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        # Wakes any reply still waiting out its delay, so closing never hangs.
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        # Kept-alive connections outlive the listening socket; end them so a
        # client that keeps its pool sees the server gone.
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._thread.join()

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def bodies(self) -> list:
        return [request.body for request in self.requests]

    def _next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if not self.script:
                return Reply(status=500, body={"error": {"message": "the test script ran out of replies"}})
            return self.script.pop(0)

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self):
                with server._lock:
                    server._connections.discard(self.connection)
                super().finish()

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                path = self.path.split("?", 1)[0]
                headers = {name.lower(): value for name, value in self.headers.items()}
                recorded = Recorded("POST", self.path, headers, body)
                if path not in (OPENAI_PATH, ANTHROPIC_PATH) and not GEMINI_PATH.match(path):
                    with server._lock:
                        server.requests.append(recorded)
                    self._answer(Reply(status=404, body={"error": {"message": f"no route {path}"}}))
                    return
                reply = server._next_reply(recorded)
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    return
                self._answer(reply)

            def _answer(self, reply: Reply) -> None:
                if isinstance(reply.body, str):
                    payload = reply.body.encode()
                    content_type = "text/plain"
                else:
                    payload = json.dumps(reply.body).encode()
                    content_type = "application/json"
                try:
                    self.send_response(reply.status)
                    headers = {"Content-Type": content_type, **reply.headers}
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up waiting (a timeout test): nobody to answer.
                    pass

            def log_message(self, format, *args):
                pass

        return Handler


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 that nothing listens on (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class SlowJudgeServer:
    """An OpenAI-compatible endpoint that answers every chat completion with a
    relevance verdict after ``delay_s``. It counts the requests it answered
    (``counter["answered"]``) and the most it held at once (``counter["most_in_flight"]``)."""

    def __init__(self, *, delay_s: float):
        counter = {"answered": 0, "in_flight": 0, "most_in_flight": 0}
        lock = threading.Lock()
        body = json.dumps(openai_completion('{"score": 4, "reason": "fine"}').body).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                with lock:
                    counter["in_flight"] += 1
                    counter["most_in_flight"] = max(counter["most_in_flight"], counter["in_flight"])
                try:
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    time.sleep(delay_s)
                finally:
                    # Counted out before the answer is written: once the client has
                    # read it, it gives its slot back and another call may come in
                    # before this thread runs again (5 "in flight" under a limit of 4
                    # when three suites shared two cores).
                    with lock:
                        counter["in_flight"] -= 1
                        counter["answered"] += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.counter = counter
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
