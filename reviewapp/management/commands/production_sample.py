import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.errors import ApplicationError
from reviewapp.runs.services.question_sets import set_version_from_production_frame
from scoring.production import PERIODS


def _date(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError as error:
        raise CommandError(f"{value!r} is not a date such as 2026-11-01") from error


class Command(BaseCommand):
    help = (
        "Draw a seeded sample of production questions into a new set version, by the time each was "
        "asked (asked_at on every line of the frame, JSON Lines), stratified by week or month between "
        "two dates (both included). The upload time is never used."
    )

    def add_arguments(self, parser):
        parser.add_argument("frame", help="the frame: production questions as JSON Lines, each with asked_at")
        parser.add_argument("--set-version", dest="set_version", required=True, help="the new set version")
        parser.add_argument("--from", dest="start", required=True, help="first day asked, e.g. 2026-11-01")
        parser.add_argument("--to", dest="end", required=True, help="last day asked, e.g. 2026-11-30")
        parser.add_argument("--size", type=int, required=True, help="how many questions to draw")
        parser.add_argument("--period", choices=PERIODS, default="week", help="the strata of asked time")
        parser.add_argument("--seed", type=int, required=True, help="the same seed draws the same questions")
        parser.add_argument("--set-name", default="", help="the question set (default: the default set)")

    def handle(
        self, *args, frame: str, set_version: str, start, end, size, period, seed, set_name, **options
    ):
        path = Path(frame)
        if not path.is_file():
            raise CommandError(f"{frame}: no such file")
        try:
            made = set_version_from_production_frame(
                path=path,
                file_name=path.name,
                version=set_version,
                start=_date(start),
                end=_date(end),
                size=size,
                period=period,
                seed=seed,
                set_name=set_name,
            )
        except ApplicationError as rejected:
            raise CommandError("\n".join(rejected.errors)) from rejected
        self.stdout.write(f"set version {made.version}: {made.note}")
