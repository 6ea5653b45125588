"""Decorate's side: the query's embedding. Decorate embeds only its query, and begins that as
soon as it knows recall will search (`embed_query_soon`): the window and the words' candidates are
read meanwhile, so decorate waits for the longer of the two, not their sum. The local model's
queries of a process go through one batcher (`providers.embeddings.QueryBatcher`): concurrent
decorates share a model call.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from memories.embeddings.provider import model_key, provider_for
from providers.embeddings import MAX_TEXT_CHARS, EmbeddingFailed, LocalProvider, OpenAIProvider

log = logging.getLogger("threadless.embeddings")

# The query's embedding is on decorate's path: a provider that does not answer within this long (or
# the project's `timeoutMs`, when shorter) leaves that decorate lexical instead of holding it for the
# worker's timeout (30 s by default, longer than the SDKs' 15 s: their fallback would answer instead).
# The local model's answer is waited for as long at most (its first load takes a second or more).
QUERY_TIMEOUT_S = 2.0


def embed_query(project, text: str):
    """(model key, unit vector) for a query, or None when embeddings are off or the call fails or
    takes longer than QUERY_TIMEOUT_S (recall then stays lexical: a provider outage never fails or
    stalls a decorate). The local model's queries go through the process's batcher."""
    provider = _query_provider(project, text)
    if provider is None:
        return None
    if isinstance(provider, LocalProvider):
        return _batched_answer(provider, provider.embed_soon(text))
    return _query_embedding(provider, text)


def embed_query_when_asked(project, text: str) -> Callable[[], tuple[str, list[float]] | None]:
    """`embed_query`, computed when the callable returned is first called and kept: a decorate whose
    facts block may never ask (the history fits, so recall does not search)."""
    return _once(lambda: embed_query(project, text))


def embed_query_soon(project, text: str) -> Callable[[], tuple[str, list[float]] | None]:
    """`embed_query` begun now; the callable returned answers it (waiting for it when it is not
    done). The caller reads the window and the index meanwhile: the model and a provider's HTTP
    call both run outside the GIL, so decorate's latency is the longer of the two, not their sum.
    The local model's query joins the process's batcher (`LocalProvider.embed_soon`: the queries of
    concurrent decorates share one model call); another provider's runs in a thread of its own. The
    provider (and its key) is resolved here, in the caller's thread, so no other thread touches a
    database connection. An error other than EmbeddingFailed is raised by the callable, as
    `embed_query` would raise it."""
    provider = _query_provider(project, text)
    if provider is None:
        return lambda: None
    if isinstance(provider, LocalProvider):
        pending = provider.embed_soon(text)
        return _once(lambda: _batched_answer(provider, pending))
    answer: Future = Future()

    def run() -> None:
        try:
            answer.set_result(_query_embedding(provider, text))
        except BaseException as exc:  # handed to the caller, raised where it waits
            answer.set_exception(exc)

    threading.Thread(target=run, name="threadless-query-embedding", daemon=True).start()
    return _once(answer.result)


def _once(answer: Callable[[], Any]) -> Callable[[], Any]:
    """`answer`, its first result kept: the facts block and recall both ask, and a local query past
    its wait has left its batch (its future cancelled), so asking it again would raise."""
    kept: list = []

    def once():
        if not kept:
            kept.append(answer())
        return kept[0]

    return once


def _batched_answer(provider, future: Future):
    """The local model's answer, waited for at most QUERY_TIMEOUT_S (the model still loading, or a
    machine too busy): past it the query is withdrawn from its batch and that decorate is lexical."""
    try:
        return model_key(provider), future.result(timeout=QUERY_TIMEOUT_S)
    except TimeoutError:
        future.cancel()  # still waiting for a call: left out of it
        log.warning("query embedding took over %.1f s; recall stays lexical", QUERY_TIMEOUT_S)
        return None
    except EmbeddingFailed as exc:
        log.warning("query embedding failed (%s); recall stays lexical", exc)
        return None


def _query_provider(project, text: str):
    provider = provider_for(project)
    if provider is None or not text.strip():
        return None
    if isinstance(provider, OpenAIProvider):
        provider = dataclasses.replace(provider, timeout_s=min(provider.timeout_s, QUERY_TIMEOUT_S))
    return provider


def _query_embedding(provider, text: str):
    try:
        return model_key(provider), provider.embed([text[:MAX_TEXT_CHARS]])[0]
    except EmbeddingFailed as exc:
        log.warning("query embedding failed (%s); recall stays lexical", exc)
        return None
