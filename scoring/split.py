"""python -m scoring.split SET.jsonl --seed N [--out SEALED.jsonl]

Marks a random third of a new question set sealed and the rest tuning, as
spec 002 asks ("Grade two thirds while you are tuning prompts, keep a third
sealed, and open it only when you want a number that will leave the team"),
and writes the set with a split on every question.

The draw is stratified: each cell of language, stratum and expected
behaviour keeps its third (its floor or ceiling), and the whole set a third
rounded, the odd questions going to the cells with the largest remainder,
ties broken by the seed. So every language and stratum is measured in both
parts, and the sealed part keeps decline questions when the set has them.
The same seed and the same questions give the same third whatever the order
of the lines. A set that states any split already is refused: its split is
somebody's decision, not one to overwrite.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from scoring.logfile import ErrorCollector, LineError, LogFileError, validate_questions
from scoring.logfile.lines import _records, is_header, iter_lines, parse_object

SEALED_SHARE_DENOMINATOR = 3  # a third
CELL_FIELDS = ("language", "stratum", "expected_behaviour")


class SplitStated(ValueError):
    """The set states a split already; nothing is drawn."""


@dataclass(frozen=True)
class SealedDraw:
    """The ids drawn sealed, the seed, and per cell (language, stratum,
    expected behaviour) how many of how many are sealed."""

    seed: int
    sealed: frozenset[str]
    cells: dict[tuple, tuple[int, int]]

    @property
    def total(self) -> int:
        return sum(total for _, total in self.cells.values())

    def lines(self) -> list[str]:
        """The draw in words: the whole, then each cell."""
        lines = [f"sealed {len(self.sealed)} of {self.total} questions (seed {self.seed})"]
        for cell, (sealed, total) in self.cells.items():
            named = " · ".join(
                f"{name} {value}" for name, value in zip(CELL_FIELDS, cell, strict=True) if value
            )
            lines.append(f"  {named}: {sealed} of {total}")
        return lines


def _refusal(question_id: str, split: object) -> str:
    return (
        f"question {question_id} states its split already ({split}): the set is split. Upload it without "
        "a seed to keep its splits, or remove every split field to draw a new third"
    )


def seal_a_third(questions: Iterable[Mapping], *, seed: int) -> SealedDraw:
    """The stratified third of ``questions`` (dicts with question_id,
    language, expected_behaviour and optionally stratum) to seal, drawn
    with ``seed``. Refuses (SplitStated) when a question states a split."""
    by_cell: dict[tuple, list[str]] = {}
    for question in questions:
        if question.get("split") is not None:
            raise SplitStated(_refusal(question["question_id"], question["split"]))
        cell = tuple(question.get(name) for name in CELL_FIELDS)
        by_cell.setdefault(cell, []).append(question["question_id"])
    rng = random.Random(seed)
    # Sorted, so that the draw depends on the questions and not on their order.
    cells = sorted(by_cell, key=lambda cell: tuple((value is None, value or "") for value in cell))
    total = sum(len(ids) for ids in by_cell.values())
    quota = {cell: len(by_cell[cell]) // SEALED_SHARE_DENOMINATOR for cell in cells}
    # The whole a third rounded half up; the odd ones to the largest remainders.
    extra = (total + 1) // SEALED_SHARE_DENOMINATOR - sum(quota.values())
    tie_breaks = {cell: rng.random() for cell in cells}
    by_remainder = sorted(
        cells, key=lambda cell: (-(len(by_cell[cell]) % SEALED_SHARE_DENOMINATOR), tie_breaks[cell])
    )
    for cell in by_remainder[:extra]:
        quota[cell] += 1
    sealed: set[str] = set()
    counts = {}
    for cell in cells:
        ids = sorted(by_cell[cell])
        sealed.update(rng.sample(ids, quota[cell]))
        counts[cell] = (quota[cell], len(ids))
    return SealedDraw(seed=seed, sealed=frozenset(sealed), cells=counts)


def _file_questions(path: Path, collector: ErrorCollector, max_line_bytes: int | None) -> Iterable[dict]:
    for logged in _records(path, collector, max_line_bytes=max_line_bytes):
        record = logged.record
        if record.get("split") is not None:
            message = _refusal(record.get("question_id"), record["split"])
            raise SplitStated(str(LineError(logged.line, "split", message)))
        yield {name: record.get(name) for name in ("question_id", *CELL_FIELDS)}


def seal_a_third_of_file(path: Path, *, seed: int, max_line_bytes: int | None = None) -> SealedDraw:
    """seal_a_third of a question-set file (checked already: validate_questions),
    read as a stream; SplitStated names the line of a split stated."""
    collector = ErrorCollector(1)
    draw = seal_a_third(_file_questions(path, collector, max_line_bytes), seed=seed)
    collector.raise_if_any()
    return draw


def write_split(path: Path, out, draw: SealedDraw) -> None:
    """Copy the question set at ``path`` to the text stream ``out``, each
    question with its split from ``draw``, a header line kept as it is."""
    with open(path, "rb") as stream:
        first = True
        for number, text, _, _ in iter_lines(stream):
            record, _ = parse_object(number, text)
            if first and is_header(record):
                out.write(text + "\n")
            else:
                split = "sealed" if record["question_id"] in draw.sealed else "tuning"
                out.write(json.dumps({**record, "split": split}, ensure_ascii=False) + "\n")
            first = False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scoring.split", description=__doc__.split("\n\n")[1])
    parser.add_argument("questions", type=Path, help="question set, JSON Lines, with no split stated")
    parser.add_argument("--seed", type=int, required=True, help="the seed of the draw; keep it with the set")
    parser.add_argument("--out", type=Path, help="where to write the split set (default: standard output)")
    args = parser.parse_args(argv)
    if not args.questions.is_file():
        print(f"{args.questions}: no such file", file=sys.stderr)
        return 2
    try:
        validate_questions(args.questions)
        draw = seal_a_third_of_file(args.questions, seed=args.seed)
    except LogFileError as error:
        for line_error in error.errors:
            print(f"{args.questions}: {line_error}", file=sys.stderr)
        return 2
    except SplitStated as error:
        print(f"{args.questions}: {error}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            write_split(args.questions, out, draw)
    else:
        write_split(args.questions, sys.stdout, draw)
    print("\n".join(draw.lines()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
