"""What a phase of the load bench costs in CPU, read from Linux /proc: the server's process tree,
the database side (PostgreSQL's processes for one database, redis-server), the load generator
itself and the whole machine. Every reader returns seconds used so far; a phase takes the
difference."""

from __future__ import annotations

import os
from pathlib import Path


def proc_stats() -> dict[int, tuple[str, int, int]]:
    """Every process now (Linux /proc): pid → (command name, parent pid, user + system CPU ticks).
    A process that exits while it is read is left out."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                raw = (entry / "stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
            comm = raw[raw.index("(") + 1 : raw.rindex(")")]
            stats[int(entry.name)] = (comm, int(fields[1]), int(fields[11]) + int(fields[12]))
    return stats


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process `pid` and its descendants (Linux /proc):
    the server's own cost, whatever else the machine is doing."""
    stats = proc_stats()
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, (_comm, parent, _ticks) in stats.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    total = sum(stats[p][2] for p in tree if p in stats)
    return total / os.sysconf("SC_CLK_TCK")


def title(pid: int) -> list[str]:
    """The words of a process's command line (a PostgreSQL backend's is its status title); [] if gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return []


def db_cpu(database: str) -> dict[str, float]:
    """CPU seconds used so far by the database side (Linux /proc): "postgres", the PostgreSQL
    server's processes that work for `database` (its backends and autovacuum workers, and the
    server's shared ones: checkpointer, WAL writer, background writer…; other databases'
    backends are left out), and "redis", every redis-server process (all its dbs: shared)."""
    stats = proc_stats()
    postmasters = {
        pid
        for pid, (comm, parent, _) in stats.items()
        if comm == "postgres" and stats.get(parent, ("",))[0] != "postgres"
    }
    pg = redis = 0
    for pid, (comm, parent, ticks) in stats.items():
        if comm == "redis-server":
            redis += ticks
        elif pid in postmasters:
            pg += ticks
        elif parent in postmasters:
            words = title(pid)
            client = "autovacuum worker" in " ".join(words) or any("(" in w or w == "[local]" for w in words)
            if database in words or (words and not client):
                pg += ticks
    tick = os.sysconf("SC_CLK_TCK")
    return {"postgres": pg / tick, "redis": redis / tick}


def own_cpu() -> float:
    """CPU seconds (user + system) this process, the load generator, has used so far."""
    t = os.times()
    return t.user + t.system


def machine_cpu() -> tuple[float, float]:
    """The whole machine's busy and total CPU seconds so far, over all cores (Linux /proc/stat):
    over a block, busy ÷ total is the share of the machine in use, ours and everyone else's."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user
    tick = os.sysconf("SC_CLK_TCK")
    return (total - idle) / tick, total / tick
