"""python manage.py restore ARCHIVE

Load a backup written by ``manage.py backup`` into this installation, whose
database and file store must be empty (a new database: createdb, then
DATABASE_URL; a new data folder or bucket). Run ``manage.py migrate``
afterwards when the code is newer than the backup."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.backup import restore
from reviewapp.core.errors import ApplicationError


class Command(BaseCommand):
    help = __doc__.split("\n\n")[0]

    def add_arguments(self, parser):
        parser.add_argument("archive", type=Path, help="a tar file written by manage.py backup")

    def handle(self, *args, archive: Path, **options):
        try:
            summary = restore(archive)
        except ApplicationError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Restored the {summary.database} database and {summary.files} stored files "
            f"({summary.bytes / 1e6:.1f} MB) from {archive}"
        )
