"""python manage.py backup ARCHIVE

Write this installation's database and every stored file (uploaded logs,
pending imports; from the data folder or the bucket) to one new tar file.
Restore it with ``manage.py restore ARCHIVE`` into an empty installation."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.backup import backup
from reviewapp.core.errors import ApplicationError


class Command(BaseCommand):
    help = __doc__.split("\n\n")[0]

    def add_arguments(self, parser):
        parser.add_argument("archive", type=Path, help="the tar file to write (must not exist)")

    def handle(self, *args, archive: Path, **options):
        try:
            summary = backup(archive)
        except ApplicationError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Backed up the {summary.database} database and {summary.files} stored files "
            f"({summary.bytes / 1e6:.1f} MB) to {archive}"
        )
