"""`make bench-load`: the serving stack under concurrency, against its floor.

Four stacks, one after the other in one run, each served by the same server and process model
(`make serve`'s: granian, ASGI, one worker process per CPU, uvloop, THREADLESS_WEB_THREADS threads):

* floor, SQLite / floor, PostgreSQL — `bench.floor`, a bare ASGI app doing the decorate lower
  bound's SQL with the plain driver (insert + commit, window read + json.dumps; report = insert
  + commit);
* embedded default — Threadless on SQLite with the counter file;
* PostgreSQL + Redis — Threadless on its own database (BENCH_LOAD_DB, default `load_bench`) and
  Redis dbs BENCH_REDIS_DBS (default 10,11) of BENCH_REDIS.

Each client (1, 16, 64) is one keep-alive HTTP/1.1 connection on its own memory of 200
messages, doing turns (decorate one user message, then report the reply) for a fixed time; a
raw asyncio client in this process (no HTTP library, on uvloop) keeps the load generator cheap. At 16
clients `/healthz` and `GET /v1/memories/{id}` are measured too. The rate limit stays on (at a
limit no client reaches), so its counter is on the measured path; no Celery worker runs (report's
background work queues on the broker), so the numbers are the web tier's. Loopback only; the
whole run is bounded (`--phase` seconds per phase, ~4 minutes by default).

The target's share (turns/s at 16 clients ≥ 60 % of the floor's) is measured apart, in
interleaved blocks (`run_interleaved`): after the phases, a product and its floor (embedded and
floor-sqlite, postgres and floor-pg) are started side by side, then `--pairs` pairs of `--block`
seconds of 16 clients alternate between them in ABBA order, each block on fresh memories, after a
warm-up that is not counted; the share is the median of the pairs' ratios (with their range and
the pooled ratio). Phases run a minute or more apart on a machine whose other work moves the
floor's own turns/s by 2×; two adjacent blocks see nearly the same machine. Every phase and block
also records the load generator's own CPU per turn (this process) and the machine's busy share.

Web servers (`run_servers`, last, unless `--servers none`): the same app (`--servers-backend`, the
embedded default unless told) under granian (ASGI, `make serve`'s, and WSGI) and gunicorn
(uvicorn-worker and gthread), every one with `--workers` processes, and the bare floor of that
backend, all up at once; then `--rounds` rounds of one `--block` block per server and client count
(16, 64), the servers' order rotating each round, every block on fresh memories. Per server: the
median block's turns/s and p99 with their range, and the median of each round's ratio to the first
server. `make bench-servers` runs only this part.

    python -m bench.load [--phase 6] [--clients 1,16,64]
                         [--stacks floor-sqlite,embedded,floor-pg,postgres]
                         [--pairs 8] [--block PHASE] [--warm 2] [--interleave product:floor,…|none]
                         [--no-sequential] [--servers granian-asgi,granian-wsgi,…|none] [--rounds 5]
                         [--servers-backend embedded]
    python -m bench.load --pair-math [--pairs N] < blocks.json      (the pair-ratio summary of given blocks)

`before` (on request: `--stacks …,before`) is the code before this work (the merge base with
main, or BENCH_BEFORE_REF), extracted with `git archive` and served by the same server, for a
before/after in one run (`--interleave embedded:before`: in ABBA blocks); `before-pg` is the same
on PostgreSQL + Redis.

The parts, one concern each:

* `config` — where files go (BENCH_LOAD_VAR), the databases, the workload's sizes, the log line;
* `stacks` — each stack and web server: how it is prepared, started and stopped (BENCH_LOAD_PORTS);
* `client` — the load generator: the raw HTTP/1.1 client, memories, turns, probes;
* `cpu` — the CPU readers (/proc) around every phase;
* `phases` — the runs: a stack's phases, the interleaved blocks, the servers' comparison;
* `inproc` — decorate and report in process (a child, after a stack's server stopped);
* `statistics` — the ABBA order and the summaries of blocks;
* `report` — section 8 of docs/benchmarks.md;
* `__main__` — the command line.
"""
