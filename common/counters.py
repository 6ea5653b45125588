"""Atomic counters kept off the application database: rate-limit windows and usage totals.

Redis when `REDIS_URL` is set; otherwise (the embedded default) a small SQLite file of their own
(`THREADLESS_COUNTERS_PATH`, default: beside the SQLite database), so counting a request never
takes the application database's write lock. Both are exact across any number of processes:
each increment is atomic in the store (Redis INCR; one SQLite UPSERT … RETURNING under the
file's write lock), never read-modify-write, and nothing is held in process memory.

`incr_many` counts several keys in one round trip (a Redis script; one SQLite transaction);
`read_and_incr` reads one more key in that same round trip (the key generation, projects.auth).
A key counted with `flush=True` is also marked dirty; `claim_dirty` hands the dirty keys and
their totals to the periodic flush (projects.usage), and `release` forgets the claim once the
totals are safely in the database. Totals only grow, so a flush copies them (it never adds
deltas) and running it twice, or concurrently, does no harm.

Low level on purpose: no imports from the apps (it lives in `common/`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path

from django.conf import settings

from common.writelock import WriterLock

DIRTY = "tl:use:dirty"
CLAIMED = "tl:use:claimed"
_SAME_ENGINE = {"common.pgbackend": "django.db.backends.postgresql"}


def deployment_tag(db: dict | None = None) -> str:
    """Which database the flushed totals belong to: deployments sharing one Redis (but not a
    database) keep their dirty sets apart, so one's flush never takes the other's keys."""
    db = db if db is not None else settings.DATABASES["default"]
    # Django's PostgreSQL backend under its health-checking subclass is the same deployment.
    fields = {**db, "ENGINE": _SAME_ENGINE.get(db.get("ENGINE"), db.get("ENGINE"))}
    ident = "|".join(str(fields.get(k) or "") for k in ("ENGINE", "HOST", "PORT", "NAME"))
    return hashlib.sha256(ident.encode()).hexdigest()[:12]


# Claim: fold the dirty set into the claimed set (left over by a flush that died, if any) and
# return the claimed members, atomically, so an increment after the claim lands in a new set.
_CLAIM_LUA = """
if redis.call('exists', KEYS[1]) == 1 then
  redis.call('sunionstore', KEYS[2], KEYS[2], KEYS[1])
  redis.call('del', KEYS[1])
end
return redis.call('smembers', KEYS[2])
"""


# read_and_incr: ARGV[1] is 1 when KEYS[1] is read first (its value, 0 when unset), then each
# counted key's INCR (its TTL set when it has none) and, when flagged, its mark in the dirty set
# (the last key); ARGV holds a (ttl, flag) pair per counted key. Answers the values in order.
_READ_AND_INCR_LUA = """
local read = tonumber(ARGV[1])
local dirty = KEYS[#KEYS]
local out = {}
if read == 1 then
  local value = redis.call('get', KEYS[1])
  out[1] = value and tonumber(value) or 0
end
for i = read + 1, #KEYS - 1 do
  local arg = (i - read) * 2
  out[#out + 1] = redis.call('incr', KEYS[i])
  redis.call('expire', KEYS[i], ARGV[arg], 'NX')
  if ARGV[arg + 1] == '1' then
    redis.call('sadd', dirty, KEYS[i])
  end
end
return out
"""


class RedisCounters:
    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)
        self._claim = self.client.register_script(_CLAIM_LUA)
        self._read_and_incr = self.client.register_script(_READ_AND_INCR_LUA)
        self._errors = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.NoScriptError, OSError)
        self._local = threading.local()
        tag = deployment_tag()
        self.dirty, self.claimed = f"{DIRTY}:{tag}", f"{CLAIMED}:{tag}"

    def _own_connection(self):
        """This thread's own connection (of the client pool's kind and settings, outside the pool)."""
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or local.pid != os.getpid():
            pool = self.client.connection_pool
            conn = local.conn = pool.connection_class(**pool.connection_kwargs)
            local.pid = os.getpid()
        return conn

    def _script(self, keys: list, args: list):
        """The counting script's EVALSHA, sent on this thread's own connection: the request path's
        one Redis call. Through the client (`Script.__call__` → `execute_command`: the pool's lock
        and its connection check — a poll() — the retry wrapper, the argument filtering) it costs
        ~50 µs of CPU a call against ~19 µs here (docs/tuning/serving.md). On anything but a
        reply (the connection dropped, the server lost the script) the connection is closed and
        the call goes through the client's own way: reconnect, retries, SCRIPT LOAD."""
        conn = self._own_connection()
        try:
            conn.send_command("EVALSHA", self._read_and_incr.sha, len(keys), *keys, *args)
            return conn.read_response()
        except self._errors:
            conn.disconnect()
            return self._read_and_incr(keys=keys, args=args)

    def incr_many(self, items: list[tuple[str, int, bool]]) -> list[int]:
        return self.read_and_incr(None, items)[1]

    def read_and_incr(self, read: str | None, items: list[tuple[str, int, bool]]) -> tuple[int, list[int]]:
        # One script call: a pipeline of the same commands cost ~50 % more client CPU (each
        # command packed and each reply parsed in Python).
        keys = [read] if read is not None else []
        args = [len(keys)]
        for key, ttl, flush in items:
            keys.append(key)
            args += [ttl, 1 if flush else 0]
        keys.append(self.dirty)
        results = self._script(keys, args)
        if read is None:
            return 0, [int(n) for n in results]
        return int(results[0]), [int(n) for n in results[1:]]

    def decr_many(self, keys: list[str]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.decr(key)
        pipe.execute()

    def add(self, key: str, amount: int) -> int:
        return int(self.client.incrby(key, amount))

    def delete_many(self, keys: list[str]) -> None:
        if keys:
            self.client.delete(*keys)

    def get(self, key: str) -> int:
        value = self.client.get(key)
        return int(value) if value is not None else 0

    def claim_dirty(self) -> dict[str, int]:
        keys = [k.decode() for k in self._claim(keys=[self.dirty, self.claimed])]
        if not keys:
            return {}
        values = self.client.mget(keys)
        return {k: int(v) for k, v in zip(keys, values, strict=True) if v is not None}

    def release(self, claimed: dict[str, int]) -> None:
        self.client.delete(self.claimed)

    def prune(self) -> int:
        return 0  # Redis expires keys itself


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS counter (key TEXT PRIMARY KEY, count INTEGER NOT NULL, "
    "expires REAL NOT NULL, flush INTEGER NOT NULL, flushed INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
)
_UPSERT = (
    "INSERT INTO counter (key, count, expires, flush) VALUES (?, 1, ?, ?) "
    "ON CONFLICT(key) DO UPDATE SET count = count + 1 RETURNING count"
)


@functools.lru_cache(maxsize=16)
def _upsert_many_sql(rows: int, read: bool) -> str:
    """Count one in each of `rows` distinct keys in one statement (atomic in itself: one write
    transaction), returning each key's new count and, `read`, one more key's value (NULL when
    unset) read in the same statement, so at the same moment as the counts."""
    return (
        "INSERT INTO counter (key, count, expires, flush) VALUES "
        + ", ".join(["(?, 1, ?, ?)"] * rows)
        + " ON CONFLICT(key) DO UPDATE SET count = count + 1 RETURNING key, count"
        + (", (SELECT count FROM counter WHERE key = ?)" if read else "")
    )


class FileCounters:
    """Counters in their own SQLite file: WAL, no fsync (a counter may lose its last second
    in an OS crash, never its atomicity), one connection per thread and process.

    Every write first takes the file's writer lock (common.writelock: a flock the kernel hands
    on the moment it is let go, where SQLite's busy handler sleeps 1 ms and more; every request of
    every web process counts here). Reads take no lock (WAL)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = WriterLock(path)
        self._conn()  # create the table once, up front

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or local.pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=20, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute(_SCHEMA)
            local.conn, local.pid = conn, os.getpid()
        return conn

    PRUNE_EVERY = 20_000  # increments per process between prunes (the flush prunes too)

    def incr_many(self, items: list[tuple[str, int, bool]]) -> list[int]:
        now = time.time()
        self._since_prune = getattr(self, "_since_prune", 0) + 1
        if self._since_prune >= self.PRUNE_EVERY:  # bounded even where no beat runs
            self._since_prune = 0
            self.prune()
        conn = self._conn()
        with self._lock:
            if len(items) == 1:
                key, ttl, flush = items[0]
                return [conn.execute(_UPSERT, (key, now + ttl, int(flush))).fetchone()[0]]
            return self._counted(conn, None, items, now)[1]

    def read_and_incr(self, read: str | None, items: list[tuple[str, int, bool]]) -> tuple[int, list[int]]:
        if not items:
            return (self.get(read) if read is not None else 0), []
        if read is None:
            return 0, self.incr_many(items)
        conn = self._conn()
        with self._lock:
            return self._counted(conn, read, items, time.time())

    def _counted(self, conn, read, items, now) -> tuple[int, list[int]]:
        """Several keys counted (and `read` read) at one moment: one UPSERT … RETURNING for distinct
        keys (a statement is a write transaction of its own: one lock, four statements fewer than
        BEGIN, the read, an UPSERT per key and COMMIT, and the counter file's write lock held for
        one step, which every request of every process takes); a key twice (or the key read among
        them), one after the other in a transaction, as before."""
        keys = [key for key, _, _ in items]
        if len(set(keys)) < len(keys) or read in keys:
            return self._in_transaction(conn, read, items, now)
        params: list = []
        for key, ttl, flush in items:
            params += (key, now + ttl, int(flush))
        if read is not None:
            params.append(read)
        rows = conn.execute(_upsert_many_sql(len(items), read is not None), params).fetchall()
        found = {row[0]: row[1] for row in rows}  # RETURNING's row order is not promised
        value = (rows[0][2] or 0) if read is not None else 0
        return value, [found[key] for key in keys]

    def _in_transaction(self, conn, read, items, now) -> tuple[int, list[int]]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            value = 0
            if read is not None:
                row = conn.execute("SELECT count FROM counter WHERE key = ?", (read,)).fetchone()
                value = row[0] if row else 0
            counts = [
                conn.execute(_UPSERT, (key, now + ttl, int(flush))).fetchone()[0] for key, ttl, flush in items
            ]
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return value, counts

    def decr_many(self, keys: list[str]) -> None:
        conn = self._conn()
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("UPDATE counter SET count = count - 1 WHERE key = ?", [(key,) for key in keys])
            conn.execute("COMMIT")

    def add(self, key: str, amount: int) -> int:
        conn = self._conn()
        with self._lock:
            row = conn.execute(
                "UPDATE counter SET count = count + ? WHERE key = ? RETURNING count", (amount, key)
            ).fetchone()
        return row[0] if row else 0

    def delete_many(self, keys: list[str]) -> None:
        conn = self._conn()
        with self._lock:
            conn.executemany("DELETE FROM counter WHERE key = ?", [(key,) for key in keys])

    def get(self, key: str) -> int:
        row = self._conn().execute("SELECT count FROM counter WHERE key = ?", (key,)).fetchone()
        return row[0] if row else 0

    def claim_dirty(self) -> dict[str, int]:
        rows = (
            self._conn()
            .execute("SELECT key, count FROM counter WHERE flush = 1 AND count > flushed")
            .fetchall()
        )
        return dict(rows)

    def release(self, claimed: dict[str, int]) -> None:
        conn = self._conn()
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "UPDATE counter SET flushed = MAX(flushed, ?) WHERE key = ?",
                [(total, key) for key, total in claimed.items()],
            )
            conn.execute("COMMIT")

    def prune(self) -> int:
        conn = self._conn()
        with self._lock:
            cur = conn.execute(
                "DELETE FROM counter WHERE expires < ? AND (flush = 0 OR flushed >= count)", (time.time(),)
            )
        return cur.rowcount


_store: RedisCounters | FileCounters | None = None
_store_for: tuple | None = None
_lock = threading.Lock()


def store() -> RedisCounters | FileCounters:
    """The configured store (built once per process and configuration)."""
    global _store, _store_for
    config = (settings.REDIS_URL, counters_path())
    if _store is None or _store_for != config:
        with _lock:
            if _store is None or _store_for != config:
                _store = (
                    RedisCounters(settings.REDIS_URL) if settings.REDIS_URL else FileCounters(counters_path())
                )
                _store_for = config
    return _store


def counters_path() -> str:
    return settings.THREADLESS_COUNTERS_PATH or str(Path(settings.VAR_DIR) / "counters.sqlite3")


def incr_many(items: list[tuple[str, int, bool]]) -> list[int]:
    """Count one in each `(key, ttl_seconds, flush)`: the new counts, in one round trip."""
    return store().incr_many(items)


def read_and_incr(read: str, items: list[tuple[str, int, bool]]) -> tuple[int, list[int]]:
    """`read`'s value as `incr_many(items)` counts them (an atomic moment in the counter file;
    one script call in Redis): one round trip for both."""
    return store().read_and_incr(read, items)


def decr_many(keys: list[str]) -> None:
    """Take back one count from each key (a request counted and then refused before it ran)."""
    store().decr_many(keys)


def get_many(keys: list[str]) -> list[int]:
    """Each key's count (0 when unset). Counted keys never expire early, so a key meant to cover
    a time window carries the window in its name."""
    store_ = store()
    return [store_.get(key) for key in keys]


def delete_many(keys: list[str]) -> None:
    store().delete_many(keys)


def incr(key: str, ttl: int, *, flush: bool = False) -> int:
    return store().incr_many([(key, ttl, flush)])[0]
