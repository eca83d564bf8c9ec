"""One archive holding an installation: its database and its stored files.

The archive is a tar file with ``manifest.json``, the database (PostgreSQL's
own custom-format dump from ``pg_dump``, or SQLite's online backup) and
``files/<name>`` for every stored log and pending import, read through the
file store, so a bucket is backed up as the data folder is. The database is
dumped first: a log is named by its content's sha256 and never changed, so
files taken after the dump hold every file the dump names.

A restore goes into an empty installation only (a database without tables,
an empty file store), so it never mixes two installations' rows.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from reviewapp.core import files
from reviewapp.core.errors import ApplicationError

FORMAT = 1
FOLDERS = ("runs", "imports")
_DUMPS = {"postgresql": "database.pgdump", "sqlite": "database.sqlite3"}


@dataclass(frozen=True)
class Summary:
    database: str
    files: int
    bytes: int


def _scratch(prefix: str) -> Path:
    """A folder of this host's own for the dump on its way, removed by the caller."""
    Path(settings.DATA_DIR).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=settings.DATA_DIR))


def _stored_names() -> Iterator[str]:
    store = files.storage()
    for folder in FOLDERS:
        if files.is_data_folder() and not store.exists(folder):
            continue
        _, names = store.listdir(folder)
        for name in sorted(names):
            yield f"{folder}/{name}"


def _pg_environment() -> tuple[list[str], dict[str, str]]:
    """libpq's connection options for the default database, as pg_dump takes them."""
    db = settings.DATABASES["default"]
    options = ["--dbname", db["NAME"]]
    if db.get("HOST"):
        options += ["--host", db["HOST"]]
    if db.get("PORT"):
        options += ["--port", str(db["PORT"])]
    if db.get("USER"):
        options += ["--username", db["USER"]]
    env = {**os.environ, "PGPASSWORD": db.get("PASSWORD") or os.environ.get("PGPASSWORD", "")}
    return options, env


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    if shutil.which(argv[0]) is None:
        raise ApplicationError(
            f"{argv[0]} is not installed on this host; {what} needs PostgreSQL's client tools"
        )
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode:
        raise ApplicationError(f"{what} failed: {done.stderr.strip() or done.stdout.strip()}")


def _dump_database(target: Path) -> None:
    if connection.vendor == "postgresql":
        options, env = _pg_environment()
        _run(
            ["pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--file", str(target), *options],
            env,
            "dumping the database",
        )
    elif connection.vendor == "sqlite":
        connection.ensure_connection()
        with sqlite3.connect(target) as copy:
            connection.connection.backup(copy)
    else:
        raise ApplicationError(f"a backup takes PostgreSQL or SQLite, not {connection.vendor}")


def backup(archive: Path) -> Summary:
    """Write the database and every stored file to ``archive`` (a new tar file)."""
    archive = Path(archive)
    if archive.exists():
        raise ApplicationError(f"{archive} exists already; name a new file")
    work = _scratch("backup-")
    partial = archive.with_name(f".{archive.name}.{uuid.uuid4().hex}.part")
    try:
        dump = work / _DUMPS.get(connection.vendor, "database")
        _dump_database(dump)
        count = size = 0
        with tarfile.open(partial, "w") as tar:
            tar.add(dump, arcname=dump.name)
            store = files.storage()
            for name in _stored_names():
                with files.open_for_reading(name) as stream:
                    info = tarfile.TarInfo(f"files/{name}")
                    info.size = store.size(name)
                    tar.addfile(info, stream)
                count += 1
                size += info.size
            manifest = {
                "format": FORMAT,
                "database": connection.vendor,
                "dump": dump.name,
                "created_at": timezone.now().isoformat(),
                "last_migration": _last_migration(),
                "files": count,
            }
            data = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, _BytesReader(data))
        os.replace(partial, archive)  # a crash leaves no half archive under the name asked for
    finally:
        partial.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    return Summary(database=connection.vendor, files=count, bytes=size)


class _BytesReader:
    def __init__(self, data: bytes):
        self._data, self._at = data, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else self._at + size
        chunk, self._at = self._data[self._at : end], min(end, len(self._data))
        return chunk


def _last_migration() -> str:
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return ""
    last = recorder.migration_qs.filter(app="reviewapp").order_by("-id").first()
    return last.name if last else ""


def _tables() -> list[str]:
    with connection.cursor() as cursor:
        return connection.introspection.table_names(cursor)


def restore(archive: Path) -> Summary:
    """Load ``archive`` into this installation, which must be empty."""
    archive = Path(archive)
    if not archive.is_file():
        raise ApplicationError(f"{archive} is not a file")
    try:
        tar = tarfile.open(archive, "r")  # noqa: SIM115 (closed by the with below, once opened)
    except tarfile.TarError as error:
        raise ApplicationError(f"{archive} is not a backup made by manage.py backup ({error})") from error
    with tar:
        try:
            manifest = json.load(tar.extractfile("manifest.json"))
        except (KeyError, ValueError) as error:
            raise ApplicationError(
                f"{archive} has no readable manifest.json: not a backup of this app"
            ) from error
        if manifest.get("format") != FORMAT:
            raise ApplicationError(f"{archive} is a backup of format {manifest.get('format')}, not {FORMAT}")
        if manifest["database"] != connection.vendor:
            raise ApplicationError(
                f"{archive} holds a {manifest['database']} database and this installation uses "
                f"{connection.vendor}: restore it into a {manifest['database']} database"
            )
        if tables := _tables():
            raise ApplicationError(
                f"the database {settings.DATABASES['default']['NAME']} is not empty ({len(tables)} tables): "
                "a backup is restored into an empty database (createdb a new one, point DATABASE_URL at it)"
            )
        if next(_stored_names(), None) is not None:
            raise ApplicationError("the file store is not empty: a backup is restored into an empty one")
        work = _scratch("restore-")
        try:
            dump = work / manifest["dump"]
            with tar.extractfile(manifest["dump"]) as source, open(dump, "wb") as out:
                shutil.copyfileobj(source, out, 1024 * 1024)
            _load_database(dump)
            count = size = 0
            for member in tar:
                if not member.isfile() or not member.name.startswith("files/"):
                    continue
                name = member.name.removeprefix("files/")
                if name.split("/", 1)[0] not in FOLDERS or ".." in name.split("/"):
                    raise ApplicationError(
                        f"{archive} holds {member.name}, which no backup of this app writes"
                    )
                local = work / uuid.uuid4().hex
                with tar.extractfile(member) as source, open(local, "wb") as out:
                    shutil.copyfileobj(source, out, 1024 * 1024)
                files.put(name, local)
                count += 1
                size += member.size
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return Summary(database=connection.vendor, files=count, bytes=size)


def _load_database(dump: Path) -> None:
    if connection.vendor == "postgresql":
        options, env = _pg_environment()
        _run(
            [
                "pg_restore",
                "--no-owner",
                "--no-privileges",
                "--single-transaction",
                "--exit-on-error",
                *options,
                str(dump),
            ],
            env,
            "restoring the database",
        )
    else:
        connection.ensure_connection()
        with sqlite3.connect(dump) as source:
            source.backup(connection.connection)
    connection.close()  # the next query sees the restored tables
