"""A Threadless server plus a provider stub for the TypeScript proxy test (run with the venv python).

Prints one JSON line `{"url", "key", "upstream"}` (upstream: the stub's OpenAI base URL); EOF on
stdin stops both.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness.proxy_stubs import ProviderStub  # noqa: E402
from harness.servers import ThreadlessServer  # noqa: E402

stub = ProviderStub()
server = ThreadlessServer(env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1"})
try:
    server.start()
    print(json.dumps({"url": server.url, "key": server.key, "upstream": stub.openai_url}), flush=True)
    for _line in sys.stdin:
        pass
finally:
    server.stop()
    stub.close()
