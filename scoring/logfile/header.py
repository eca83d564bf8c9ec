"""A run log's header: the versions it names and the plan it declares
(repetitions, timeout_s, repeats; spec 004), and what it states of the clocks
that stamped its times (clock_skew_ms, clock_precision_ms)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from scoring.logfile.errors import LineError
from scoring.logfile.fields import (
    DEFAULT_REPETITIONS,
    DEFAULT_TIMEOUT_S,
    MAX_CLOCK_SKEW_MS,
    MAX_REPETITIONS,
    MAX_TIMEOUT_S,
    REPEATS_MAX_LENGTH,
    _character,
    _length_problem,
    _shown,
)
from scoring.logfile.lines import is_header, iter_lines, parse_object

# How the assistant was called (spec 004, channel overhead): directly, or
# with the reply policy of a chat channel.
REPLY_POLICIES = ("direct", "channel")

# A header line is short; a longer first line is an answer or a mistake.
HEADER_MAX_BYTES = 64 * 1024


def read_header(path: Path) -> dict:
    """The header of a file ({} when its first line is not a header)."""
    return _header_line(path)[1]


def _header_line(path: Path) -> tuple[int, dict]:
    with open(path, "rb") as stream:
        for number, text, _, _ in iter_lines(stream, max_line_bytes=HEADER_MAX_BYTES):
            record, _ = parse_object(number, text)
            return number, (record if record is not None and is_header(record) else {})
    return 1, {}


@dataclass(frozen=True, slots=True)
class RunPlan:
    """How a run was made, as its header declares (spec 004): each question
    asked ``repetitions`` times, each attempt stopped after ``timeout_s``
    seconds, and ``repeats``, the id of an earlier run this one repeats
    (a number or a text, as the header gives it; None when it repeats none).

    Across systems spec 004 asks for the clocks to be stated: ``clock_skew_ms``
    is the measured offset of the other system's clock (the platform's or
    runner's, which stamp its events) from the tester's, which stamps
    submitted_at and received_at, negative when it is behind;
    ``clock_precision_ms`` the finest step the clocks tell apart. Both None
    when not stated, never 0.

    ``reply_policy`` is how the assistant was called, "direct" or "channel"
    (None: not declared), and ``exclude_overhead`` True when the pipeline
    chose to leave channel overhead out of E2E."""

    repetitions: int = DEFAULT_REPETITIONS
    timeout_s: int = DEFAULT_TIMEOUT_S
    repeats: int | str | None = None
    clock_skew_ms: float | None = None
    clock_precision_ms: float | None = None
    reply_policy: str | None = None
    exclude_overhead: bool = False


def plan_from_header(header: dict, *, line: int = 1) -> tuple[RunPlan, list[LineError]]:
    """The plan a header (from read_header) declares, and the errors of its
    line ``line``. A field that is left out, null or wrong takes its default,
    so that the rest of the file can still be checked against it.

    Refuses repetitions other than a whole number from 1 to 100, timeout_s
    other than a whole number of seconds from 1 to 86400 (600.0 is taken as
    600), and repeats other than a positive whole number or a printable text
    of up to 200 characters; clock_skew_ms other than a number of
    milliseconds within a day either way, and clock_precision_ms other than a
    number of milliseconds above 0; reply_policy other than "direct" or
    "channel", and exclude_overhead other than true or false."""
    errors = []
    repetitions = header.get("repetitions")
    if repetitions is None:
        repetitions = DEFAULT_REPETITIONS
    elif type(repetitions) is not int or not 1 <= repetitions <= MAX_REPETITIONS:
        errors.append(
            LineError(
                line,
                "repetitions",
                f"must be a whole number from 1 to {MAX_REPETITIONS}, not {json.dumps(repetitions)[:60]}",
            )
        )
        repetitions = DEFAULT_REPETITIONS
    timeout_s = header.get("timeout_s")
    if timeout_s is None:
        timeout_s = DEFAULT_TIMEOUT_S
    elif type(timeout_s) is float and timeout_s.is_integer():
        timeout_s = int(timeout_s)
    if type(timeout_s) is not int or not 1 <= timeout_s <= MAX_TIMEOUT_S:
        errors.append(
            LineError(
                line,
                "timeout_s",
                f"must be a whole number of seconds from 1 to {MAX_TIMEOUT_S}, "
                f"not {json.dumps(header['timeout_s'])[:60]}",
            )
        )
        timeout_s = DEFAULT_TIMEOUT_S
    repeats = header.get("repeats")
    if repeats is not None and (problem := _repeats_problem(repeats)):
        errors.append(LineError(line, "repeats", problem))
        repeats = None
    skew, skew_problem = _clock_value(header.get("clock_skew_ms"), precision=False)
    if skew_problem:
        errors.append(LineError(line, "clock_skew_ms", skew_problem))
    precision, precision_problem = _clock_value(header.get("clock_precision_ms"), precision=True)
    if precision_problem:
        errors.append(LineError(line, "clock_precision_ms", precision_problem))
    reply_policy = header.get("reply_policy")
    if reply_policy is not None and reply_policy not in REPLY_POLICIES:
        errors.append(
            LineError(
                line, "reply_policy", f'must be "direct" or "channel", not {json.dumps(reply_policy)[:60]}'
            )
        )
        reply_policy = None
    exclude_overhead = header.get("exclude_overhead")
    if exclude_overhead is not None and type(exclude_overhead) is not bool:
        errors.append(
            LineError(
                line, "exclude_overhead", f"must be true or false, not {json.dumps(exclude_overhead)[:60]}"
            )
        )
    plan = RunPlan(
        repetitions=repetitions,
        timeout_s=timeout_s,
        repeats=repeats,
        clock_skew_ms=skew,
        clock_precision_ms=precision,
        reply_policy=reply_policy,
        exclude_overhead=exclude_overhead is True,
    )
    return plan, errors


def _clock_value(value, *, precision: bool) -> tuple[float | None, str | None]:
    """A stated skew or precision in milliseconds, or None and why not."""
    if value is None:
        return None, None
    shown = json.dumps(value)[:60]
    is_number = type(value) in (int, float) and math.isfinite(value)
    if precision:
        if not is_number or value <= 0:
            return None, f"must be a number of milliseconds above 0, not {shown}"
        return float(value), None
    if not is_number:
        return None, (
            f"must be a number of milliseconds (negative when the other clock is behind), not {shown}"
        )
    if abs(value) > MAX_CLOCK_SKEW_MS:
        return None, f"must be within a day ({MAX_CLOCK_SKEW_MS} ms) either way, not {shown}"
    return float(value), None


def _repeats_problem(repeats) -> str | None:
    if type(repeats) is int:
        # As large as a database's integer key can be.
        if 1 <= repeats < 2**63:
            return None
        return f"a run id is a positive whole number or a text, not {json.dumps(repeats)[:60]}"
    if type(repeats) is not str:
        return f"must be the id of the run repeated, a number or a text, not {json.dumps(repeats)[:60]}"
    if problem := _length_problem(repeats.strip(), REPEATS_MAX_LENGTH):
        return problem
    if not repeats.isprintable():
        bad = next(c for c in repeats if not c.isprintable())
        return f"{_shown(repeats)} holds {_character(bad)}; a run id is printable text"
    return None


def read_plan(path: Path) -> tuple[RunPlan, list[LineError]]:
    """The plan a run log's header declares (the defaults when it has no
    header), and the errors of the header's line (see plan_from_header)."""
    line, header = _header_line(path)
    return plan_from_header(header, line=line)
