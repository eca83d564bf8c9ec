"""Calls in flight across every worker process: a counting semaphore in
Redis whose holders keep leases.

A judge version's concurrency is what its provider allows by key, so it must
hold across workers, not per process: W workers of a concurrency-C judge
would otherwise send W x C calls at once. Each call takes a slot, a member
of a sorted set scored by its lease's end in Redis's own clock (so hosts'
clocks do not matter). A thread of each process renews the leases its calls
hold; a killed worker's slots come back when their leases end.

Without Redis (the embedded default runs tasks in-process, where the judge's
thread pool already bounds the calls) the limit is the process's own. When
Redis cannot be reached the call goes ahead, logged: the pool still bounds
each process, and the provider's 429s are retried as ever.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

logger = logging.getLogger(__name__)

# KEYS[1]: the slots; ARGV: limit, token, lease in ms. 1 when taken.
_TAKE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
"""
# KEYS[1]: the slots; ARGV: lease in ms, then the tokens still held.
_RENEW = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now_ms + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 1
"""

# Between tries for a slot: short, with jitter so waiting threads do not knock in step.
_WAIT_S = (0.01, 0.05)


class _Process:
    """This process's Redis client and the slots its calls hold, renewed by one thread."""

    def __init__(self, url: str):
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.take = self.client.register_script(_TAKE)
        self.renew = self.client.register_script(_RENEW)
        self.held: dict[str, set[str]] = {}
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._keep, name="call-slot-leases", daemon=True)
        self.thread.start()

    def _keep(self) -> None:
        while True:
            time.sleep(settings.CALL_SLOT_LEASE_SECONDS / 3)
            with self.lock:
                held = {key: list(tokens) for key, tokens in self.held.items() if tokens}
            for key, tokens in held.items():
                try:
                    self.renew(keys=[key], args=[_lease_ms(), *tokens])
                except Exception:
                    logger.warning("could not renew the call slots of %s", key, exc_info=True)


_processes: dict[int, _Process] = {}
_processes_lock = threading.Lock()


def _process() -> _Process | None:
    url = settings.CALL_LIMITS_REDIS_URL
    if not url:
        return None
    # By process id: a forked worker makes its own client and thread.
    pid = os.getpid()
    with _processes_lock:
        if pid not in _processes:
            _processes[pid] = _Process(url)
        return _processes[pid]


def _lease_ms() -> int:
    return int(settings.CALL_SLOT_LEASE_SECONDS * 1000)


@contextmanager
def call_slot(name: str, limit: int) -> Iterator[None]:
    """Hold one of ``limit`` slots named ``name``, shared by every process
    on the same Redis, for as long as the block runs; waits for one."""
    process = _process()
    if process is None:
        yield
        return
    key = f"reviewapp:calls:{name}"
    token = uuid.uuid4().hex
    try:
        while not process.take(keys=[key], args=[limit, token, _lease_ms()]):
            time.sleep(random.uniform(*_WAIT_S))
    except Exception:
        logger.warning("no call slot from Redis for %s; calling without the shared limit", name, exc_info=1)
        taken = False
    else:
        taken = True
    if not taken:
        yield
        return
    with process.lock:
        process.held.setdefault(key, set()).add(token)
    try:
        yield
    finally:
        with process.lock:
            process.held[key].discard(token)
        try:
            process.client.zrem(key, token)
        except Exception:
            logger.warning("could not give back a call slot of %s; its lease will end", name, exc_info=True)


def judge_call_slot(version_id: int, concurrency: int):
    """The slot factory a judge version's model calls take (scoring.llm's ``send_limit``)."""
    return lambda: call_slot(f"judge-version:{version_id}", concurrency)
