"""The worker's side: stored text is embedded at indexing time (`embed_entries`, called by
`memories.background.process_entries`, at most CHUNK_CHARS of text a job), and a memory's vectors
are brought to the current model in bounded background steps (`backfill`).
"""

from __future__ import annotations

from common.messages import text_of
from memories.embeddings.provider import model_key, pieces, provider_for
from memories.embeddings.store import VectorStore
from memories.models import Entry, Memory
from providers.embeddings import MAX_TEXT_CHARS

BACKFILL_CHUNK = 500  # entries embedded per background step at most
# Text one background job embeds at most (the characters of its messages and their sentences, each
# cut at MAX_TEXT_CHARS), plus the one message that crosses it (at most (1 + PIECE_MAX)·MAX_TEXT_CHARS):
# about 2 CPU-seconds with the local model on a 2-core machine (docs/background-memory.md), so a
# long report or an import becomes many short jobs that take turns with other projects' work.
CHUNK_CHARS = 10_000
EMBED_BATCH = 64  # texts per provider request


def _texts(entry_ids: list[int]) -> list[tuple[int, int, str]]:
    """(entry id, seq, text) of the committed messages among these entries that have text, newest first."""
    rows = (
        Entry.objects.filter(id__in=entry_ids, kind="message", committed=True, role__in=("user", "assistant"))
        .order_by("-seq")
        .values_list("id", "seq", "content", "parts")
    )
    out = []
    for entry_id, seq, content, parts in rows:
        text = text_of(parts) if parts else content
        if text and text.strip():
            out.append((entry_id, seq, text.strip()))
    return out


def embed_entries(
    *, memory_id: str, entry_ids: list[int], provider=None, project=None, max_chars: int | None = None
) -> int:
    """Embed these entries with the memory's provider (the worker, at indexing time). Entries that
    are no longer committed messages lose their vectors. With `max_chars`, only the newest of them
    whose texts fit it (`text_chars`; always at least one): the rest keep no vector, for the
    backfill. Returns how many were embedded."""
    return _embed_within(memory_id, entry_ids, provider, project, max_chars)[0]


def text_chars(texts: list[str]) -> int:
    """What embedding these texts costs, in characters: each as the provider is sent it."""
    return sum(min(len(t), MAX_TEXT_CHARS) for t in texts)


def _embed_within(memory_id, entry_ids, provider, project, max_chars) -> tuple[int, int]:
    """(embedded, entries handled): `embed_entries`, also saying how many of the entries it is done
    with (embedded, or with no text to embed), so a caller knows how many wait for the next chunk."""
    if provider is None:
        if project is None:
            memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
            project = memory.project if memory else None
        provider = provider_for(project)
    if provider is None or not entry_ids:
        return 0, 0
    items = _texts(entry_ids)
    keep = {e for e, _, _ in items}
    VectorStore.remove(entry_ids=[e for e in entry_ids if e not in keep])
    chunk = [(entry_id, seq, pieces(text)) for entry_id, seq, text in items]
    if max_chars is not None:
        spent = 0
        for n, (_entry, _seq, texts) in enumerate(chunk):
            if n and spent + text_chars(texts) > max_chars:
                chunk = chunk[:n]
                break
            spent += text_chars(texts)
    model = model_key(provider)
    done = 0
    batch: list[tuple[int, int, list[str]]] = []
    texts: list[str] = []  # the batch's texts, message after message
    for n, item in enumerate(chunk, 1):
        batch.append(item)
        texts += item[2]
        if n == len(chunk) or len(texts) >= EMBED_BATCH:
            vectors = iter(provider.embed(texts))
            done += VectorStore.put(
                memory_id=memory_id,
                model=model,
                items=[(e, s, [next(vectors) for _ in ts]) for e, s, ts in batch],
            )
            batch, texts = [], []
    handled = len(chunk) + len(entry_ids) - len(items)  # the ones without text are done with too
    return done, handled


def backfill(
    *,
    memory_id: str,
    provider=None,
    project=None,
    limit: int = BACKFILL_CHUNK,
    max_chars: int = CHUNK_CHARS,
) -> dict:
    """One bounded step of bringing a memory's vectors to the current model: drop other models'
    vectors, embed up to `limit` messages that have none (newest first) whose texts fit
    `max_chars`. `remaining` > 0 means call again (the worker's vectors job does: the outbox)."""
    if provider is None:
        memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
        provider = provider_for(memory.project if memory else project)
    if provider is None:
        return {"embedded": 0, "dropped": 0, "remaining": 0}
    model = model_key(provider)
    dropped = VectorStore.drop_other_models(memory_id=memory_id, model=model)
    todo = VectorStore.missing(memory_id=memory_id, model=model, limit=limit + 1)
    embedded, handled = _embed_within(memory_id, todo[:limit], provider, None, max_chars)
    return {"embedded": embedded, "dropped": dropped, "remaining": len(todo) - handled}


def backfill_due(*, memory_id: str, provider, upto_seq: int) -> bool:
    """Whether `backfill` has work in this memory: a message up to `upto_seq` without a vector of
    the provider's model (later ones are the work of the runs that cover them), or a vector of
    another model."""
    model = model_key(provider)
    missing = VectorStore.missing(memory_id=memory_id, model=model, limit=1, upto_seq=upto_seq)
    return bool(missing) or VectorStore.has_other_models(memory_id=memory_id, model=model)
