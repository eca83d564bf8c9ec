"""python -m scoring.collect against a scripted OpenAI-compatible server and a tiny command."""

import http.server
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from scoring.collect import ChatEndpoint, ProgressBar, collect, main
from scoring.logfile import RunPlan, read_answers, read_header, read_plan, read_questions

ROOT = Path(__file__).resolve().parents[2]
PROG = "python -m scoring.collect: "


class ChatServer(http.server.ThreadingHTTPServer):
    """Answers chat completions as the question's first word says: plain,
    evidence, overlap (takes 0.2 s), slow (held until the test ends), fail
    (HTTP 500), broken (not JSON), quota (HTTP 429), custom (another shape)."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.requests: list[dict] = []
        self.slow_arrived = threading.Event()
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class ChatHandler(http.server.BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = body["messages"][0]["content"]
        with self.server.lock:
            self.server.requests.append(
                {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body}
            )
            self.server.in_flight += 1
            self.server.most_in_flight = max(self.server.most_in_flight, self.server.in_flight)
        self.counted = True
        try:
            self.answer(question.split(":")[0], question)
        finally:
            self.leave()

    def leave(self):
        """Out of flight before the reply is written: once the client has it,
        it may send its next call before this thread runs again (seen on a
        loaded machine as one call too many in flight)."""
        with self.server.lock:
            if self.counted:
                self.counted = False
                self.server.in_flight -= 1

    def answer(self, kind: str, question: str):
        reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": f"re {question}"}}]}
        if kind == "evidence":
            reply["reviewapp"] = {
                "retrieved_ids": ["HLTH_LIFE_EXP"],
                "retrieved_values": [72.4, 72.1],
                "cited_ids": ["HLTH_LIFE_EXP"],
                "declined": False,
                "tool_calls": [{"id": "call-1", "name": "search"}],
            }
        elif kind == "overlap":
            time.sleep(0.2)
        elif kind == "slow":
            self.server.slow_arrived.set()
            self.server.release.wait(30)
        elif kind == "fail":
            return self.send(500, json.dumps({"error": {"message": "the model crashed"}}))
        elif kind == "quota":
            return self.send(429, json.dumps({"error": {"message": "quota exceeded"}}))
        elif kind == "broken":
            return self.send(200, '{"choices": [')
        elif kind == "custom":
            reply = {"output": {"text": f"re {question}", "sources": ["A1"]}}
        elif kind == "unsourced":
            reply = {"output": {"text": f"re {question}"}}
        self.send(200, json.dumps(reply))

    def send(self, status: int, text: str):
        data = text.encode("utf-8")
        self.leave()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    chat = ChatServer()
    thread = threading.Thread(target=chat.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield chat
    chat.release.set()
    chat.shutdown()
    chat.server_close()


def write_set(tmp_path: Path, texts: dict[str, str | None], *, header: dict | None = None) -> Path:
    path = tmp_path / "questions.jsonl"
    lines = [json.dumps(header if header is not None else {"set_version": "s-1"})]
    for question_id, text in texts.items():
        question = {"question_id": question_id, "language": "en", "expected_behaviour": "answer"}
        question["expected_values"] = [1.0]
        if text is not None:
            question["question"] = text
        lines.append(json.dumps(question))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def lines_of(path: Path) -> list[dict]:
    """The run log's answers, after the app's reader validated the whole file."""
    return [logged.record for logged in read_answers(path)]


def seconds_between(line: dict, start: str, end: str) -> float:
    return (datetime.fromisoformat(line[end]) - datetime.fromisoformat(line[start])).total_seconds()


def run(*args) -> int:
    return main([str(arg) for arg in args])


def test_it_asks_each_question_three_times_when_no_repetitions_are_given(tmp_path, server, capsys):
    # Spec 004: "The default is three runs per question."
    questions = write_set(tmp_path, {"q1": "plain: one", "q2": "plain: two"})
    out = tmp_path / "run.jsonl"
    assert run(questions, "--endpoint", server.url, "--model", "m-1", "--out", out) == 0
    assert capsys.readouterr().out == f"wrote 6 attempts to {out}: 6 ok\n"
    assert read_plan(out) == (RunPlan(repetitions=3, timeout_s=600, clock_precision_ms=1.0), [])
    assert [(line["question_id"], line["attempt"]) for line in lines_of(out)] == [
        ("q1", 1), ("q1", 2), ("q1", 3), ("q2", 1), ("q2", 2), ("q2", 3),
    ]  # fmt: skip


def test_its_function_also_plans_three_attempts_unless_told(tmp_path, server):
    questions = read_questions(write_set(tmp_path, {"q1": "plain: one"}))
    summary = collect(
        questions=questions,
        assistant=ChatEndpoint(url=server.url),
        out=tmp_path / "run.jsonl",
        assistant_version="a-1",
        set_version="s-1",
    )
    assert summary.counts["ok"] == 3
    assert read_plan(tmp_path / "run.jsonl")[0].repetitions == 3


def test_it_says_in_its_help_that_three_attempts_are_the_default(capsys):
    with pytest.raises(SystemExit):
        run("--help")
    assert (
        "attempts per question (default 3, spec 004's default; with 1 no stable-resolution rate can be shown)"
    ) in " ".join(capsys.readouterr().out.split())


def test_it_asks_every_question_r_times_and_logs_them_in_set_order(tmp_path, server, capsys, monkeypatch):
    monkeypatch.setenv("TEST_CHAT_KEY", "sekret")
    questions = write_set(tmp_path, {"q1": "plain: one", "q2": "evidence: two", "q3": "plain: three"})
    out = tmp_path / "run.jsonl"
    status = run(
        questions, "--endpoint", server.url, "--model", "m-1", "--api-key-env", "TEST_CHAT_KEY",
        "--repetitions", 2, "--concurrency", 3, "--timeout-s", 5, "--out", out,
    )  # fmt: skip
    assert status == 0
    assert capsys.readouterr().out == f"wrote 6 attempts to {out}: 6 ok\n"
    assert read_header(out) == {
        "assistant_version": "m-1",
        "set_version": "s-1",
        "repetitions": 2,
        "timeout_s": 5,
        # The clock resolves nanoseconds here; the stamps hold milliseconds.
        "clock_precision_ms": 1.0,
    }
    assert read_plan(out) == (RunPlan(repetitions=2, timeout_s=5, clock_precision_ms=1.0), [])
    lines = lines_of(out)
    assert [(line["question_id"], line["attempt"], line["status"]) for line in lines] == [
        ("q1", 1, "ok"), ("q1", 2, "ok"), ("q2", 1, "ok"), ("q2", 2, "ok"), ("q3", 1, "ok"), ("q3", 2, "ok"),
    ]  # fmt: skip
    first, evidence = lines[0], lines[2]
    assert {key: first[key] for key in first if not key.endswith("_at")} == {
        "question_id": "q1",
        "language": "en",
        "attempt": 1,
        "status": "ok",
        "question": "plain: one",
        "answer": "re plain: one",
        "retrieved_ids": [],
        "retrieved_values": [],
        "cited_ids": [],
        "declined": False,
    }
    assert {
        key: evidence[key] for key in ("retrieved_ids", "retrieved_values", "cited_ids", "tool_calls")
    } == {
        "retrieved_ids": ["HLTH_LIFE_EXP"],
        "retrieved_values": [72.4, 72.1],
        "cited_ids": ["HLTH_LIFE_EXP"],
        "tool_calls": [{"id": "call-1", "name": "search"}],
    }
    for line in lines:
        assert line["submitted_at"].endswith("Z") and line["received_at"].endswith("Z")
        assert 0 <= seconds_between(line, "submitted_at", "received_at") < 2
        # Nothing reports a startup, so none is logged in its place.
        assert "startup_at" not in line
    assert {request["path"] for request in server.requests} == {"/v1/chat/completions"}
    assert {request["authorization"] for request in server.requests} == {"Bearer sekret"}
    assert server.requests[0]["body"]["model"] == "m-1"
    assert sorted(request["body"]["messages"][0]["content"] for request in server.requests) == sorted(
        ["plain: one", "evidence: two", "plain: three"] * 2
    )


def test_it_records_a_timeout_with_the_moment_it_gave_up(tmp_path, server, capsys):
    questions = write_set(tmp_path, {"q1": "slow: one", "q2": "plain: two"})
    out = tmp_path / "run.jsonl"
    status = run(
        questions,
        "--endpoint",
        server.url,
        "--model",
        "m-1",
        "--repetitions",
        1,
        "--timeout-s",
        1,
        "--out",
        out,
    )
    assert status == 1
    assert capsys.readouterr().out == f"wrote 2 attempts to {out}: 1 ok, 1 timeout\n"
    timed_out, answered = lines_of(out)
    assert (timed_out["status"], timed_out["status_reason"]) == (
        "timeout",
        "no answer within the timeout of 1 s",
    )
    assert "received_at" not in timed_out
    assert timed_out["answer"] is None and timed_out["declined"] is False
    assert 1.0 <= seconds_between(timed_out, "submitted_at", "stopped_at") < 1.5
    assert answered["status"] == "ok"


def test_it_records_errors_with_their_reason(tmp_path, server, capsys):
    questions = write_set(
        tmp_path, {"q1": "fail: one", "q2": "broken: two", "q3": "quota: three", "q4": "plain: four"}
    )
    out = tmp_path / "run.jsonl"
    status = run(
        questions,
        "--endpoint",
        server.url,
        "--model",
        "m-1",
        "--repetitions",
        1,
        "--concurrency",
        4,
        "--out",
        out,
    )
    assert status == 1
    assert capsys.readouterr().out == f"wrote 4 attempts to {out}: 1 ok, 2 error, 1 refused_quota\n"
    assert [(line["status"], line.get("status_reason")) for line in lines_of(out)] == [
        ("error", "HTTP 500 Internal Server Error: the model crashed"),
        ("error", 'the response is not JSON (Expecting value: line 1 column 14 (char 13)): {"choices": ['),
        ("refused_quota", "HTTP 429 Too Many Requests: quota exceeded"),
        ("ok", None),
    ]


def test_it_runs_as_many_attempts_at_once_as_the_concurrency_and_no_more(tmp_path, server):
    questions = write_set(tmp_path, {f"q{n}": f"overlap: {n}" for n in range(4)})
    common = ("--endpoint", server.url, "--model", "m-1", "--repetitions", 1)
    assert run(questions, *common, "--concurrency", 2, "--out", tmp_path / "two.jsonl") == 0
    assert server.most_in_flight == 2
    server.most_in_flight = 0
    assert run(questions, *common, "--concurrency", 1, "--out", tmp_path / "one.jsonl") == 0
    assert server.most_in_flight == 1
    assert [line["question_id"] for line in lines_of(tmp_path / "two.jsonl")] == ["q0", "q1", "q2", "q3"]


def test_it_reads_the_fields_a_mapping_names(tmp_path, server):
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"answer": "output.text", "cited_ids": "output.sources"}))
    questions = write_set(tmp_path, {"q1": "custom: one", "q2": "unsourced: two"})
    out = tmp_path / "run.jsonl"
    status = run(
        questions,
        "--endpoint",
        server.url,
        "--assistant-version",
        "a-2",
        "--repetitions",
        1,
        "--mapping",
        mapping,
        "--out",
        out,
    )
    assert status == 1
    mapped, unsourced = lines_of(out)
    assert (mapped["answer"], mapped["cited_ids"], mapped["retrieved_ids"]) == ("re custom: one", ["A1"], [])
    assert (unsourced["status"], unsourced["status_reason"]) == (
        "error",
        "the response has no output.sources (the cited_ids)",
    )
    assert read_header(out)["assistant_version"] == "a-2"
    assert "model" not in server.requests[0]["body"]


ASSISTANT_SCRIPT = """
import json, os, sys, time
question = sys.stdin.read()
if question.startswith("json"):
    print(json.dumps({"answer": "declined", "declined": True, "retrieved_ids": ["X"], "retrieved_values": [1.5]}))
elif question.startswith("fail"):
    sys.exit("no model configured")
elif question.startswith("sleep"):
    time.sleep(20)
else:
    print(f"{os.environ['REVIEWAPP_QUESTION_ID']} attempt {os.environ['REVIEWAPP_ATTEMPT']}: {question}")
"""


def test_it_asks_a_command_with_the_question_on_its_input(tmp_path, capsys):
    script = tmp_path / "assistant.py"
    script.write_text(ASSISTANT_SCRIPT)
    questions = write_set(
        tmp_path, {"q1": "plain one", "q2": "json two", "q3": "fail three", "q4": "sleep four"}
    )
    out = tmp_path / "run.jsonl"
    started = time.monotonic()
    status = run(
        questions, "--command", f"{sys.executable} {script}", "--assistant-version", "cmd-1",
        "--repetitions", 2, "--concurrency", 8, "--timeout-s", 1, "--out", out,
    )  # fmt: skip
    assert time.monotonic() - started < 3
    assert status == 1
    assert capsys.readouterr().out == f"wrote 8 attempts to {out}: 4 ok, 2 error, 2 timeout\n"
    lines = lines_of(out)
    assert [(line["answer"], line["status"], line.get("status_reason")) for line in lines] == [
        ("q1 attempt 1: plain one", "ok", None),
        ("q1 attempt 2: plain one", "ok", None),
        ("declined", "ok", None),
        ("declined", "ok", None),
        (None, "error", "the command exited with status 1: no model configured"),
        (None, "error", "the command exited with status 1: no model configured"),
        (None, "timeout", "no answer within the timeout of 1 s"),
        (None, "timeout", "no answer within the timeout of 1 s"),
    ]
    assert (lines[2]["declined"], lines[2]["retrieved_ids"], lines[2]["retrieved_values"], lines[2]["cited_ids"]) == (
        True, ["X"], [1.5], [],
    )  # fmt: skip


def test_it_leaves_a_valid_partial_log_when_interrupted(tmp_path, server):
    questions = write_set(tmp_path, {"q1": "plain: one", "q2": "slow: two", "q3": "plain: three"})
    out = tmp_path / "run.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "scoring.collect", questions, "--endpoint", server.url, "--model", "m-1",
         "--repetitions", "1", "--timeout-s", "60", "--out", out],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.slow_arrived.wait(10)
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        stdout, stderr = process.communicate(timeout=10)
    finally:
        process.kill()
    assert time.monotonic() - interrupted < 2
    assert process.returncode == 130
    assert stdout == ""
    assert stderr == (
        f"{PROG}interrupted: {out} is a partial run log, its 2 unfinished attempts written with "
        'status "cancelled" (collection interrupted)\n'
    )
    answered, waiting, unsent = lines_of(out)
    assert answered["status"] == "ok"
    assert (waiting["status"], waiting["status_reason"]) == (
        "cancelled",
        "collection interrupted while waiting for the answer",
    )
    assert seconds_between(waiting, "submitted_at", "stopped_at") >= 0
    assert (unsent["status"], unsent["status_reason"]) == (
        "cancelled",
        "collection interrupted before the question was sent",
    )
    assert "submitted_at" not in unsent


def test_it_stops_when_the_caller_says_so(tmp_path, server):
    questions = read_questions(write_set(tmp_path, {"q1": "slow: one", "q2": "plain: two"}))
    stop = threading.Event()
    threading.Thread(target=lambda: server.slow_arrived.wait(10) and stop.set(), daemon=True).start()
    summary = collect(
        questions=questions,
        assistant=ChatEndpoint(url=server.url),
        out=tmp_path / "run.jsonl",
        assistant_version="a-1",
        set_version="s-1",
        repetitions=2,
        timeout_s=60,
        stop=stop,
    )
    assert summary.interrupted
    assert summary.counts == {"ok": 0, "error": 0, "timeout": 0, "cancelled": 4, "refused_quota": 0}
    assert [line["status"] for line in lines_of(tmp_path / "run.jsonl")] == ["cancelled"] * 4


def test_it_refuses_an_unreachable_endpoint_in_one_sentence(tmp_path, capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    questions = write_set(tmp_path, {"q1": "plain: one"})
    out = tmp_path / "run.jsonl"
    url = f"http://127.0.0.1:{port}/v1"
    assert run(questions, "--endpoint", url, "--model", "m-1", "--repetitions", 1, "--out", out) == 2
    assert capsys.readouterr().err == (
        f"{PROG}cannot reach the endpoint {url}: nothing accepts connections on 127.0.0.1 port {port}\n"
    )
    assert not out.exists()


def test_it_refuses_bad_input_before_sending_anything(tmp_path, server, capsys):
    common = ("--endpoint", server.url, "--model", "m-1", "--repetitions", 1)
    questions = write_set(tmp_path, {"q1": "plain: one", "q2": None, "q3": None})
    assert run(questions, *common, "--out", tmp_path / "run.jsonl") == 2
    assert capsys.readouterr().err == (
        f"{PROG}{questions} has 2 problems:\n"
        "  line 3, field question: no question text to ask: give the question in the field question\n"
        "  line 4, field question: no question text to ask: give the question in the field question\n"
    )
    with questions.open("a") as stream:
        stream.write('{"question_id": "q4", "language": "en"}\nnot json\n')
    assert run(questions, *common, "--out", tmp_path / "run.jsonl") == 2
    assert capsys.readouterr().err == (
        f"{PROG}{questions} has 5 problems:\n"
        "  line 3, field question: no question text to ask: give the question in the field question\n"
        "  line 4, field question: no question text to ask: give the question in the field question\n"
        "  line 5, field expected_behaviour: missing\n"
        "  line 5, field expected_values: missing\n"
        "  line 6: not JSON (invalid literal, expected 'null' at column 1)\n"
    )
    assert server.requests == []
    existing = tmp_path / "existing.jsonl"
    existing.write_text("keep me\n")
    good = write_set(tmp_path, {"q1": "plain: one"})
    assert run(good, *common, "--out", existing) == 2
    assert (
        capsys.readouterr().err
        == f"{PROG}{existing} already exists: choose another file or give --overwrite\n"
    )
    assert existing.read_text() == "keep me\n"
    assert run(good, *common, "--out", existing, "--overwrite") == 0
    assert [line["status"] for line in lines_of(existing)] == ["ok"]
    with pytest.raises(SystemExit) as exit_:
        run(good, *common, "--out", tmp_path / "other.jsonl", "--timeout-s", "0.5")
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        f"{PROG}argument --timeout-s: --timeout-s must be a whole number from 1 to 86400, not '0.5' (see --help)\n"
    )
    assert len(server.requests) == 1


def test_it_shows_progress_with_rate_and_time_left(tmp_path, server, capsys):
    assert (
        ProgressBar.render(10, 40, elapsed=5.0)
        == "[=======>                      ] 10/40 attempts, 2.0/s, 15 s left"
    )
    assert ProgressBar.render(0, 40, elapsed=0.0) == "[>                             ]  0/40 attempts"
    assert (
        ProgressBar.render(40, 40, elapsed=20.0) == "[==============================] 40/40 attempts, 2.0/s"
    )
    questions = write_set(tmp_path, {"q1": "plain: one", "q2": "plain: two"})
    common = ("--endpoint", server.url, "--model", "m-1", "--repetitions", 2, "--progress")
    assert run(questions, *common, "--out", tmp_path / "run.jsonl") == 0
    err = capsys.readouterr().err
    assert err.startswith("\r[")
    last = err.rsplit("\r", 1)[1]
    assert last.startswith("[==============================] 4/4 attempts, ") and last.endswith("/s\n")


def test_it_states_the_precision_of_its_clock_or_of_its_stamps_when_finer(monkeypatch):
    from types import SimpleNamespace

    from scoring.collect import loop

    monkeypatch.setattr(loop.time, "get_clock_info", lambda name: SimpleNamespace(resolution=0.015625))
    assert loop.clock_precision_ms() == 15.625
    monkeypatch.setattr(loop.time, "get_clock_info", lambda name: SimpleNamespace(resolution=1e-9))
    assert loop.clock_precision_ms() == 1.0
