"""A real Threadless server for the TypeScript SDK's live tests (run with the project's venv python).

Starts `harness.servers.ThreadlessServer` (uvicorn, own var dir and database; with `--worker` a
Celery worker too, for tests that wait for facts), prints one JSON
line `{"url", "key"}`, then obeys lines on stdin: `stop` (SIGTERM the web server), `start` (start it
again on the same port). Each command is answered with one line. EOF stops everything.
"""

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness.servers import ThreadlessServer  # noqa: E402

server = ThreadlessServer(worker="--worker" in sys.argv[1:])
try:
    server.start()
    print(json.dumps({"url": server.url, "key": server.key}), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "stop":
            server.stop_web()
            print("stopped", flush=True)
        elif command == "start":
            server.start_web()
            print("started", flush=True)
        else:
            print(f"unknown command {command!r}", flush=True)
finally:
    server.stop()
    shutil.rmtree(server.var, ignore_errors=True)
