"""python manage.py gate --baseline V1 --candidate V2 [--set S] [--measure M ...]
[--margin 2] [--max-drop 5] [--floor numeric_accuracy=0.9 ...] [--max-p90 30] [--max-timeout-rate 0.02]

Prints the verdict as JSON. Each measure is a non-inferiority decision on the
questions both versions were asked: it passes only when the one-sided 97.5 %
lower bound of candidate - baseline is above -margin. Exits 0 when every
measure passes; 1 when one fails (shown worse, drops more than allowed,
misses a floor for sure) or is inconclusive (not shown safe); 2 when the gate
cannot judge (an option is malformed, a version or its scores are missing, a
measure has no paired question)."""

import json

from django.core.management.base import BaseCommand

from reviewapp.versions.gate import GateRefused, gate_run, parse_floors
from scoring.measures import MEASURES
from scoring.stats.gate import DEFAULT_MARGIN_POINTS


class Command(BaseCommand):
    help = __doc__.split("\n\n")[0]

    def add_arguments(self, parser):
        parser.add_argument("--baseline", required=True, help="assistant version to compare against")
        parser.add_argument("--candidate", required=True, help="assistant version to judge")
        parser.add_argument(
            "--set", dest="set_version", default="", help="set version (default: the latest both ran)"
        )
        parser.add_argument(
            "--measure", action="append", choices=MEASURES, help="measures to judge (repeatable)"
        )
        parser.add_argument(
            "--margin",
            type=float,
            default=DEFAULT_MARGIN_POINTS,
            help=f"non-inferiority margin in points (default {DEFAULT_MARGIN_POINTS:g})",
        )
        parser.add_argument(
            "--max-drop", type=float, help="largest drop allowed on the common questions, in points"
        )
        parser.add_argument(
            "--max-p90",
            type=float,
            metavar="SECONDS",
            help="the candidate's end-to-end P90 may not exceed this",
        )
        parser.add_argument(
            "--max-timeout-rate",
            type=float,
            metavar="SHARE",
            help="timeouts of all attempts, shown under this",
        )
        parser.add_argument(
            "--judge",
            default="",
            metavar="NAME[:vN]",
            help="add a judge's rubric grades as a measure; only a judge validated against people is taken",
        )
        parser.add_argument(
            "--unequal-attempts",
            action="store_true",
            help="judge versions that made a different number of attempts per question (else: cannot judge)",
        )
        parser.add_argument(
            "--floor",
            action="append",
            default=[],
            metavar="MEASURE=RATE",
            help="lowest success rate (a share, 0.9 for 90 %%) the candidate must be shown above",
        )

    def handle(
        self,
        *args,
        baseline,
        candidate,
        set_version,
        measure,
        margin,
        max_drop,
        floor,
        max_p90,
        max_timeout_rate,
        judge,
        unequal_attempts=False,
        **options,
    ):
        try:
            verdict = gate_run(
                baseline=baseline,
                candidate=candidate,
                set_version=set_version,
                measures=measure,
                margin_points=margin,
                max_drop_points=max_drop,
                floors=parse_floors(floor),
                max_p90_s=max_p90,
                max_timeout_rate=max_timeout_rate,
                judge=judge,
                unequal_attempts=unequal_attempts,
            )
        except GateRefused as refused:
            self.stdout.write(
                json.dumps(
                    {
                        "passed": False,
                        "verdict": "cannot judge",
                        "field": refused.field,
                        "error": str(refused),
                    }
                )
            )
            raise SystemExit(2) from refused
        self.stdout.write(json.dumps(verdict, indent=2, ensure_ascii=False))
        if verdict["exit_code"]:
            raise SystemExit(verdict["exit_code"])
