"""Response caches: a SQLite file safe to share between threads (SqliteCache),
and the check that refuses a cache that works only in the thread that opened
it. Any mutable mapping is a cache; LLM.complete reads and writes it."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path

from scoring.llm.base import CacheError


def check_cache_threads(cache: MutableMapping | None) -> None:
    """Refuse (CacheError) a cache that works only in the thread that opened it.

    A shelve file on Python 3.13 or later sits on SQLite, whose connection
    refuses other threads; the probe reads the cache from a new thread.
    """
    if cache is None:
        return
    failure: list[BaseException] = []

    def probe():
        try:
            _ = "reviewapp-thread-probe" in cache
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    if failure:
        raise CacheError(
            f"this cache ({type(cache).__name__}) works only in the thread that opened it, so it cannot "
            f"be used with several threads: use one thread, or a SqliteCache ({failure[0]})"
        )


class SqliteCache(MutableMapping):
    """A response cache in a SQLite file, safe to share between threads."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("create table if not exists responses (key text primary key, value text)")
        except sqlite3.Error as error:
            raise CacheError(f"the response cache {self.path} cannot be opened: {error}") from error

    def __getitem__(self, key: str):
        with self._lock:
            row = self._db.execute("select value from responses where key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])

    def __setitem__(self, key: str, value) -> None:
        with self._lock:
            self._db.execute(
                "insert or replace into responses (key, value) values (?, ?)", (key, json.dumps(value))
            )

    def __delitem__(self, key: str) -> None:
        with self._lock:
            deleted = self._db.execute("delete from responses where key = ?", (key,)).rowcount
        if not deleted:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            keys = [row[0] for row in self._db.execute("select key from responses")]
        return iter(keys)

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("select count(*) from responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
