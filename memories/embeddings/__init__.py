"""Embeddings for recall: the provider a project uses, the vectors' store, dense search over it,
the worker's indexing and decorate's query. One module a concern:

* `provider` — which provider a project uses (`provider_for`, `enabled`), the model key vectors
  are labelled with, and the texts a message is embedded as (`pieces`);
* `store` — `VectorStore` (the one code that reads or writes `RecallVector` rows) and each
  process's copy of a memory's codes (sign bits) that a search scans;
* `search` — `neighbourhood` / `nearest` over the whole memory, `source_similarity`;
* `indexing` — the worker's side: `embed_entries` at indexing time, `backfill` to the current model;
* `query` — decorate's side: `embed_query`, `embed_query_soon`, `embed_query_when_asked` (the local
  model's queries of a process share model calls through `providers.embeddings.QueryBatcher`).

The names below are the package's public surface; callers import them from here.
"""

from memories.embeddings.indexing import (
    BACKFILL_CHUNK,
    CHUNK_CHARS,
    EMBED_BATCH,
    backfill,
    backfill_due,
    embed_entries,
    text_chars,
)
from memories.embeddings.provider import LAYOUT, PIECE_MAX, enabled, model_key, pieces, provider_for
from memories.embeddings.query import QUERY_TIMEOUT_S, embed_query, embed_query_soon, embed_query_when_asked
from memories.embeddings.search import Nearest, nearest, neighbourhood, source_similarity
from memories.embeddings.store import (
    CODE_CACHE_SECONDS,
    CODE_CANDIDATES,
    PIECE_SHARE,
    STATS_SAMPLE,
    VectorStore,
    closeness,
    closeness_of,
    codes_of,
)
from providers.embeddings import (  # the clients live with the other provider clients
    LOCAL_INSTALL,
    MAX_TEXT_CHARS,
    EmbeddingFailed,
    LocalProvider,
    OpenAIProvider,
    available_local,
)

__all__ = [
    "BACKFILL_CHUNK",
    "CHUNK_CHARS",
    "CODE_CACHE_SECONDS",
    "CODE_CANDIDATES",
    "EMBED_BATCH",
    "LAYOUT",
    "LOCAL_INSTALL",
    "MAX_TEXT_CHARS",
    "PIECE_MAX",
    "PIECE_SHARE",
    "QUERY_TIMEOUT_S",
    "STATS_SAMPLE",
    "EmbeddingFailed",
    "LocalProvider",
    "Nearest",
    "OpenAIProvider",
    "VectorStore",
    "available_local",
    "backfill",
    "backfill_due",
    "closeness",
    "closeness_of",
    "codes_of",
    "embed_entries",
    "embed_query",
    "embed_query_soon",
    "embed_query_when_asked",
    "enabled",
    "model_key",
    "nearest",
    "neighbourhood",
    "pieces",
    "provider_for",
    "source_similarity",
    "text_chars",
]
