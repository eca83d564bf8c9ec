"""python manage.py gate --baseline V1 --candidate V2 [--set S] [--measure M ...]
[--max-drop 0.02] [--floor numeric_accuracy=0.9 ...]

Prints the verdict as JSON; exits 0 when the candidate passes, 1 when a
measure is significantly worse on the common questions, drops more than
allowed or falls below its floor, and 2 when it cannot be judged at all."""

import json

from django.core.management.base import BaseCommand

from reviewapp.services.gate import GateRefused, gate_run, parse_floors
from scoring.measures import MEASURES


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
            "--max-drop", type=float, help="largest drop allowed on the common questions (a share)"
        )
        parser.add_argument(
            "--floor", action="append", default=[], metavar="MEASURE=RATE", help="lowest success rate allowed"
        )

    def handle(self, *args, baseline, candidate, set_version, measure, max_drop, floor, **options):
        try:
            verdict = gate_run(
                baseline=baseline,
                candidate=candidate,
                set_version=set_version,
                measures=measure,
                max_drop=max_drop,
                floors=parse_floors(floor),
            )
        except GateRefused as refused:
            self.stdout.write(json.dumps({"passed": False, "error": str(refused)}))
            raise SystemExit(2) from refused
        self.stdout.write(json.dumps(verdict, indent=2))
        if not verdict["passed"]:
            raise SystemExit(1)
