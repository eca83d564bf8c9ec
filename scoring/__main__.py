"""python -m scoring RUN.jsonl [--questions SET.jsonl] [--json] [options]

Scores a run log on the automatic measures and prints a table per slice,
every rate with its denominator and 95 % interval, then the findings; or one
JSON object with --json. Without --questions the log must be in the combined
form, carrying expected behaviour and values.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from pathlib import Path

from scoring import timing
from scoring.declines import decline_warnings
from scoring.logfile import (
    LogFileError,
    declared_follow_ups,
    is_combined_form,
)
from scoring.measures import (
    FAILURE_MEASURES,
    MEASURE_LABELS,
    MEASURES,
    Options,
    RunScores,
    denominator,
    not_applicable,
)
from scoring.question_table import scoring_questions
from scoring.runner import FINDINGS_JSON, FINDINGS_TEXT, score_file
from scoring.stats.rates import INTERVAL_METHODS, counted_rate, rate


def with_intervals(scores: RunScores, *, method: str) -> dict:
    """The scores as JSON-ready data, each measure with its interval."""
    result = scores.as_dict()
    for measures in result["slices"].values():
        for counts in measures.values():
            interval = counted_rate(counts, method=method)
            counts.pop("clusters", None)
            counts["low"], counts["high"] = round(interval.low, 6), round(interval.high, 6)
            if interval.clustered:
                # The figure spec 000's reference script gives, for comparison.
                independent = rate(counts["k"], counts["n"], method=method)
                counts["effective_n"], counts["clusters"] = interval.effective_n, interval.clusters
                counts["unclustered"] = {"low": round(independent.low, 6), "high": round(independent.high, 6)}
    if scores.options.as_dict():
        result["options"] = scores.options.as_dict()
    result["interval"] = {"method": method, "confidence": 0.95}
    result["denominators"] = {measure: denominator(measure, scores.options) for measure in MEASURES}
    # A measure no question or answer of the run counts in is absent from the
    # slices: named here with the reason, so that it is read as n/a, not 0.
    result["not_applicable"] = not_applicable(scores.slices.get("all", {}))
    result["warnings"] = scored_warnings(scores)
    return result


def scored_warnings(scores: RunScores) -> list[str]:
    """What the scores cannot show: no question expecting a decline was
    counted (not run ones included), so refusal accuracy has nothing to say."""
    refusals = scores.slices.get("all", {}).get("refusal_accuracy") or {}
    return decline_warnings(decline_questions=refusals.get("n", 0), what="the questions scored")


def format_table(scores: RunScores, *, method: str = "wilson") -> str:
    """One row per slice, each measure as rate (n=…) [low–high], then the findings."""
    width = max([len("slice"), *(len(name) for name in scores.slices)]) + 2
    # "n/a": the measure applies to no question of the run; "-": to none of
    # this slice (as spec 000's table marks it).
    absent = not_applicable(scores.slices.get("all", {}))
    cells_by_slice = {}
    for slice_name, measures in scores.slices.items():
        cells = []
        for measure in MEASURES:
            counts = measures.get(measure)
            if counts is None:
                cells.append("n/a" if measure in absent else "-")
                continue
            r = counted_rate(counts, method=method)
            effective = f", eff. {r.effective_n:.0f}" if r.clustered else ""
            cells.append(f"{r.value:.2f} (n={r.n}{effective}) [{r.low:.2f}-{r.high:.2f}]")
        cells_by_slice[slice_name] = cells
    columns = [
        max([len(MEASURE_LABELS[m]), *(len(c[i]) for c in cells_by_slice.values())]) + 2
        for i, m in enumerate(MEASURES)
    ]
    lines = [f"{scores.answers} answers", ""]
    if scores.reruns:
        of_run = f" of run {scores.repeats}" if scores.repeats is not None else ""
        lines[1:1] = [f"re-runs: {scores.reruns} (linked to failed attempts{of_run})"]
    if scores.not_run:
        lines[1:1] = [
            f"{scores.not_run} questions of the set not run: counted as failures of numeric accuracy "
            "(where a number is expected), answer rate and refusal accuracy"
        ]
    lines.append(
        "slice".ljust(width)
        + "".join(MEASURE_LABELS[m].rjust(w) for m, w in zip(MEASURES, columns, strict=True))
    )
    for slice_name, cells in cells_by_slice.items():
        lines.append(
            slice_name.ljust(width) + "".join(cell.rjust(w) for cell, w in zip(cells, columns, strict=True))
        )
    failures = ", ".join(MEASURE_LABELS[m] for m in MEASURES if m in FAILURE_MEASURES)
    lines.append("")
    lines += [f"n/a: {MEASURE_LABELS[m]} does not apply: {reason}" for m, reason in absent.items()]
    lines += [f"warning: {warning}" for warning in scored_warnings(scores)]
    lines.append(
        f"rate (n=denominator) [95 % {method.replace('_', '-')} interval]; lower is better for {failures}"
    )
    lines.append(
        "eff. = effective n: numbers and citations of one answer, and attempts of one question, "
        "are not independent draws; the interval is made on what they are worth (cluster-robust)"
    )
    lines += [f"n of {MEASURE_LABELS[m]}: {denominator(m, scores.options)}" for m in MEASURES]
    if scores.options.as_dict():
        lines.append("options: " + ", ".join(scores.options.as_dict()))
    lines += _repeat_lines(scores) + _timing_lines(scores)
    lines += ["", f"findings: {scores.finding_count}"]
    lines += [f"  {f.question_id}: {f.kind}: {f.detail}" for f in scores.findings]
    return "\n".join(lines)


def _repeat_lines(scores: RunScores) -> list[str]:
    if scores.repetitions < 2:
        return []
    lines = [
        "",
        "right number in every attempt (automatic measures, not graded stable resolution) "
        f"over all questions ({scores.repetitions} attempts each):",
    ]
    for measure, figure in scores.stable.get("all", {}).items():
        stable, over = figure["stable"], figure["over_attempts"]
        spread = " · ".join(f"{label}: {count}" for label, count in figure["distribution"].items())
        lines.append(
            f"  {MEASURE_LABELS[measure]}: {stable['k']}/{stable['n']} questions passed every attempt"
            f" ({spread})"
            + (
                f"; over attempts {over['rate']:.2f} (n={over['n']}) [{over['low']:.2f}-{over['high']:.2f}],"
                f" cluster-robust, effective n {over['effective_n']:g}"
                if over
                else ""
            )
        )
    return lines


def _timing_lines(scores: RunScores) -> list[str]:
    overall = scores.timing.get("all")
    if not overall:
        return []
    lines = [
        "",
        "timing, all answers (seconds; P90 by nearest rank):",
        f"  {timing.clock_statement(**scores.clock)}",
        f"  {timing.reply_policy_statement(scores.reply_policy)}",
    ]
    e2e = timing.e2e_shown(overall, exclude_overhead=scores.exclude_overhead)
    for source, figure in e2e["by_source"].items():
        lines.append(
            f"  E2E from {source}: n={figure['n']}, mean {figure['mean']:.2f}, P50 {figure['p50']:.2f}, "
            f"P90 {figure['p90']:.2f}; missing {e2e['missing']}"
        )
    chosen_by = "the log's header" if scores.exclude_overhead else None
    if statement := timing.overhead_statement(overall, chosen_by=chosen_by):
        lines.append(f"  {statement}")
        for kind in overall["overhead"]["by_kind"].values():
            lines.append(
                f"  overhead, {kind['label']}: {kind['n']} answers, total {kind['total']:.2f}, "
                f"median {kind['p50']:.2f}"
                if kind["n"]
                else f"  overhead, {kind['label']}: not logged"
            )
    # Each event named by what was captured, apart from E2E and from each other.
    for event in overall["events"].values():
        lines.append(
            f"  {event['label']}: n={event['n']}, P50 {event['p50']:.2f}, P90 {event['p90']:.2f}; "
            f"missing {event['missing']}"
            if event["n"]
            else f"  {event['label']}: not logged"
        )
    proxy = overall["platform_e2e"]
    if proxy["n"]:
        lines.append(
            f"  platform E2E (proxy, not receiver side): n={proxy['n']}, "
            f"P50 {proxy['p50']:.2f}, P90 {proxy['p90']:.2f}"
        )
    failures = overall["failures"]
    failed = ", ".join(f"{status} {count}" for status, count in failures["counts"].items() if count)
    if failed:
        lines.append(f"  without a final answer, of {failures['n']} attempts: {failed}; not latency samples")
    for source, figure in e2e["by_source"].items():
        if "per_question" in figure:
            lines += _question_median_lines(source, figure["per_question"])
    return lines


def _question_median_lines(source: str, per_question: dict) -> list[str]:
    """Each question's median E2E from ``source``, slowest first, with its
    samples of attempts; "–" for a question none of whose attempts is a sample."""
    rows = timing.slowest_questions(per_question)
    cells = [
        (
            row["question_id"],
            "–" if row["median_s"] is None else f"{row['median_s']:.2f}",
            f"{row['samples']} of {row['attempts']}",
        )
        for row in rows
    ]
    widths = [max(len(header), *(len(cell[i]) for cell in cells)) for i, header in enumerate(_MEDIAN_HEADERS)]
    lines = [
        "",
        f"each question's median E2E over its attempts (seconds, from {source}; slowest first; "
        "a failed attempt is no sample):",
    ]
    for question_id, median, samples in [_MEDIAN_HEADERS, *cells]:
        lines.append(
            f"  {question_id.ljust(widths[0])}  {median.rjust(widths[1])}  {samples.rjust(widths[2])}"
        )
    return lines


_MEDIAN_HEADERS = ("question", "median", "samples")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scoring", description=__doc__.split("\n\n")[1])
    parser.add_argument("run", type=Path, help="run log, JSON Lines")
    parser.add_argument("--questions", type=Path, help="question set, JSON Lines")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--interval", choices=sorted(INTERVAL_METHODS), default="wilson", help="interval method"
    )
    parser.add_argument(
        "--slice",
        action="append",
        dest="slices",
        metavar="FIELD",
        help="slice by an answer or question field (repeatable; default: language)",
    )
    parser.add_argument(
        "--rounding", action="store_true", help="a number matches values rounded to its precision"
    )
    parser.add_argument("--scale-words", action="store_true", help='read "1.2 million" also as 1200000')
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="count each distinct number and cited id once per answer (default: every occurrence, "
        "as spec 000's reference script)",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes to score with (0: every core)")
    args = parser.parse_args(argv)

    for path in filter(None, (args.run, args.questions)):
        if not path.is_file():
            print(f"{path}: no such file", file=sys.stderr)
            return 2
    if not args.questions and not is_combined_form(args.run):
        print(
            f"{args.run}: the answers carry no expected values; "
            "give the question set with --questions SET.jsonl",
            file=sys.stderr,
        )
        return 2
    # Findings go to a file as they are found, so that memory stays flat
    # however many a run has; they are copied into the output at the end.
    with tempfile.TemporaryFile() as findings:
        try:
            source = args.questions or args.run
            slice_fields = tuple(args.slices or ("language",))
            questions = None
            if args.questions:
                questions = scoring_questions(args.questions, slice_fields, workers=args.workers)
            source = args.run
            scores = score_file(
                args.run,
                questions,
                slice_fields=slice_fields,
                options=Options(rounding=args.rounding, scale_words=args.scale_words, distinct=args.distinct),
                workers=args.workers,
                findings_to=findings,
                findings_format=FINDINGS_JSON if args.json else FINDINGS_TEXT,
                declared_follow_ups=declared_follow_ups(args.questions) if args.questions else None,
            )
        except LogFileError as error:
            return _report(source, error)
        follow_ups = scores.follow_ups
        findings.seek(0)
        text = io.TextIOWrapper(findings, encoding="utf-8")
        if args.json:
            head, tail = json.dumps(
                {
                    **with_intervals(scores, method=args.interval),
                    "follow_ups": follow_ups,
                    "findings": _FINDINGS,
                },
                ensure_ascii=False,
                indent=2,
            ).split(json.dumps(_FINDINGS))
            sys.stdout.write(head)
            if scores.finding_count:
                sys.stdout.write("[\n")
                _copy(text, drop_last=len(",\n"))
                sys.stdout.write("\n  ]")
            else:
                sys.stdout.write("[]")
            sys.stdout.write(tail + "\n")
        else:
            sys.stdout.write(format_table(scores, method=args.interval) + "\n")
            if follow_ups["attempts"]:
                sys.stdout.write(f"\n{follow_ups['summary']}\n")
            _copy(text)
        text.detach()
    return 0


# Where the findings go in the JSON printed.
_FINDINGS = "\x00findings\x00"


def _copy(text: io.TextIOBase, *, drop_last: int = 0) -> None:
    """Copy ``text`` to standard output in blocks, leaving out its last ``drop_last`` characters."""
    held = ""
    while block := text.read(1 << 20):
        block = held + block
        held = block[len(block) - drop_last :] if drop_last else ""
        sys.stdout.write(block[: len(block) - drop_last] if drop_last else block)


def _report(path: Path, error: LogFileError) -> int:
    for line_error in error.errors:
        print(f"{path}: {line_error}", file=sys.stderr)
    if error.total > len(error.errors):
        print(f"{path}: … and {error.total - len(error.errors)} more", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader stopped early (`| head`): what it did not read needs no
        # traceback. Python's documented way: point stdout at devnull so the
        # flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
