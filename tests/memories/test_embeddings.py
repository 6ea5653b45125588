"""Embedding providers and semantic recall: the openai-compatible provider against a real local
stub server, vectors stored by the worker (a long message whole and sentence by sentence, in one
row), decorate embedding only its query, fusion finding a paraphrase, a model or row-layout change
re-embedding in the background, a provider outage staying lexical."""

from __future__ import annotations

import array
import json
import math
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest
from django.db import connection as db_connection
from django.db import transaction

from common.tokens import message_tokens
from memories import embeddings, recall, services
from memories.models import Entry, Memory, Outbox, RecallVector
from memories.recall import reads as recall_reads
from tests.fixtures.background import CORPUS, converse, drain
from tests.fixtures.embed_stub import EmbeddingsStub

PET_LINE = "I have a beagle, Biscuit, who sleeps on the sofa all day."
LONG_TURN = (
    "Ana: We spent the weekend at the lake with the kids. My sister finally taught me to sail her "
    "little dinghy! Then we grilled fish and watched the stars."
)
QUESTION = "What's the name of my dog?"


@pytest.fixture
def stub(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    with EmbeddingsStub() as server:
        yield server


def _configure(project, stub, model="stub-embed-1"):
    project.model_config = {"embeddings": {"provider": "openai", "model": model, "baseUrl": stub.url}}
    project.save(update_fields=["model_config"])


@pytest.fixture
def pet_memory(cast, stub):
    _configure(cast.project_a, stub)
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [[PET_LINE, "Biscuit sounds like a lovely companion."]])
    converse(memory, CORPUS["filler"][:10])
    drain()
    memory.refresh_from_db()
    return memory


def test_the_openai_provider_posts_the_texts_and_answers_unit_vectors(stub):
    provider = embeddings.OpenAIProvider(model="stub-embed-1", base_url=stub.url, api_key="sk-test")
    vectors = provider.embed(["my dog", "a beagle"])
    assert len(vectors) == 2 and all(abs(sum(x * x for x in v) - 1) < 1e-6 for v in vectors)
    seen = stub.requests[0]
    assert seen["path"] == "/v1/embeddings" and seen["body"] == {
        "model": "stub-embed-1",
        "input": ["my dog", "a beagle"],
    }
    assert seen["authorization"] == "Bearer sk-test"


def test_the_provider_refuses_an_internal_address_the_egress_policy_does_not_allow(stub, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    provider = embeddings.OpenAIProvider(model="m", base_url=stub.url)
    with pytest.raises(embeddings.EmbeddingFailed):
        provider.embed(["x"])
    assert stub.requests == []


def test_the_provider_keeps_its_connection_between_calls(stub):
    # One pooled connection (the outbound pool the llm task uses), not a new one (and a CA bundle
    # load, and for https a handshake) per query embedding.
    provider = embeddings.OpenAIProvider(model="m", base_url=stub.url)
    for text in ("one", "two", "three"):
        provider.embed([text])
    assert len(stub.requests) == 3 and len({r["client"] for r in stub.requests}) == 1


def test_the_provider_ignores_proxies_from_the_environment(stub, monkeypatch):
    # A proxy resolves the host itself, past the egress check: the call goes straight to baseUrl.
    with EmbeddingsStub() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.server.server_address[1]}")
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        embeddings.OpenAIProvider(model="m", base_url=stub.url).embed(["my dog"])
        assert proxy.requests == []
    assert [r["path"] for r in stub.requests] == ["/v1/embeddings"]


def test_a_query_embedding_that_does_not_answer_in_time_leaves_recall_lexical(cast, settings, monkeypatch):
    # The query's embedding is on decorate's path: it waits QUERY_TIMEOUT_S, not the worker's 30 s.
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    monkeypatch.setattr(embeddings.query, "QUERY_TIMEOUT_S", 0.2)
    with EmbeddingsStub(delay=1.5) as slow:
        _configure(cast.project_a, slow)
        assert embeddings.embed_query(cast.project_a, QUESTION) is None
        assert len(slow.requests) == 1
        assert len(embeddings.provider_for(cast.project_a).embed([PET_LINE])[0]) == 64  # the worker waits


def test_a_local_query_embedding_that_does_not_answer_in_time_leaves_recall_lexical(cast, monkeypatch):
    # The model still loading, or a machine too busy: decorate waits QUERY_TIMEOUT_S at most, and
    # its query leaves the batch it was waiting for.
    waiting = []

    class Held(embeddings.LocalProvider):
        def embed_soon(self, text):
            waiting.append(Future())
            return waiting[-1]

    monkeypatch.setattr(embeddings.query, "QUERY_TIMEOUT_S", 0.05)
    monkeypatch.setattr(embeddings.query, "provider_for", lambda project: Held())
    answer = embeddings.embed_query_soon(cast.project_a, QUESTION)
    assert answer() is None
    assert answer() is None  # the facts block and recall both ask: the withdrawn query answers None again
    assert embeddings.embed_query(cast.project_a, QUESTION) is None
    assert len(waiting) == 2 and all(f.cancelled() for f in waiting)


def test_embeddings_are_local_by_default_and_off_is_one_setting_away(cast, settings):
    settings.THREADLESS_EMBEDDINGS = "local"  # the shipped default (tests/conftest.py pins off for speed)
    assert isinstance(embeddings.provider_for(cast.project_a), embeddings.LocalProvider)
    assert embeddings.enabled(cast.project_a)
    settings.THREADLESS_EMBEDDINGS = "off"
    assert embeddings.provider_for(cast.project_a) is None and not embeddings.enabled(cast.project_a)


def test_the_worker_stores_one_vector_per_message_with_model_and_dimension(pet_memory):
    messages = Entry.objects.filter(memory=pet_memory, kind="message", committed=True).count()
    rows = RecallVector.objects.filter(memory=pet_memory)
    assert rows.count() == messages
    assert set(rows.values_list("model", "dim")) == {("openai:stub-embed-1#pieces", 64)}


def test_a_message_of_several_sentences_is_embedded_whole_and_sentence_by_sentence_with_its_speaker():
    assert embeddings.pieces(LONG_TURN) == [
        LONG_TURN,
        "Ana: We spent the weekend at the lake with the kids.",
        "Ana: My sister finally taught me to sail her little dinghy!",
        "Ana: Then we grilled fish and watched the stars.",
    ]
    assert embeddings.pieces(PET_LINE) == [PET_LINE]  # one sentence: the whole vector says it
    assert embeddings.pieces("Ok. Thanks! I have a dog named Rex.") == ["Ok. Thanks! I have a dog named Rex."]
    no_speaker = "We went to Porto in May. The tiles were everywhere, blue and white."
    assert embeddings.pieces(no_speaker)[1:] == [
        "We went to Porto in May.",
        "The tiles were everywhere, blue and white.",
    ]
    many = " ".join(f"Sentence number {i} is here." for i in range(20))
    assert len(embeddings.pieces(many)) == 1 + embeddings.PIECE_MAX


def test_the_worker_stores_a_long_messages_pieces_in_its_one_row(cast, stub):
    _configure(cast.project_a, stub)
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [[LONG_TURN, "Sounds like a lovely weekend."]])
    drain()
    row = RecallVector.objects.get(entry__content=LONG_TURN)
    assert row.dim == 64 and len(bytes(row.vector)) == 4 * 64 * 4  # whole + 3 sentences, float32
    assert set(embeddings.pieces(LONG_TURN)) <= set(stub.inputs())
    reply = RecallVector.objects.get(entry__content="Sounds like a lovely weekend.")
    assert len(bytes(reply.vector)) == 64 * 4


def test_one_sentence_close_to_the_query_brings_its_message_close(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [["A long turn about many things.", "ok"], ["A short one.", "ok"]])
    rows = {e.content: e for e in Entry.objects.filter(memory=memory, role="user")}
    long, short = rows["A long turn about many things."], rows["A short one."]
    query = [1.0, 0.0, 0.0]
    put = embeddings.VectorStore.put
    put(
        memory_id=memory.id,
        model="test:fake",
        items=[(long.id, long.seq, [0.0, 1.0, 0.0]), (short.id, short.seq, [0.6, 0.8, 0.0])],
    )
    nearest = embeddings.nearest(memory_id=memory.id, model="test:fake", query=query, limit=2)
    assert [e for _, _, e in nearest] == [short.id, long.id]  # the whole vectors alone
    put(
        memory_id=memory.id,
        model="test:fake",
        items=[(long.id, long.seq, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])],
    )
    nearest = embeddings.nearest(memory_id=memory.id, model="test:fake", query=query, limit=2)
    assert [e for _, _, e in nearest] == [long.id, short.id]
    expected = (1 - embeddings.PIECE_SHARE) * 0.0 + embeddings.PIECE_SHARE * 1.0
    assert nearest[0][0] == pytest.approx(expected)
    assert embeddings.closeness([0.0, 1.0, 0.0, 1.0, 0.0, 0.0], query) == pytest.approx(
        expected
    )  # pure Python


@pytest.mark.parametrize("numpy", [True, False], ids=["numpy", "pure-python"])
def test_a_rows_closeness_is_the_same_with_numpy_or_without(numpy, monkeypatch):
    if not numpy:
        monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now fails: the fallback runs
    else:
        pytest.importorskip("numpy")

    def row(*vectors):
        return b"".join(array.array("f", v).tobytes() for v in vectors)

    query = [0.6, 0.8, 0.0]
    got = embeddings.closeness_of(
        [row([1.0, 0.0, 0.0]), row([0.0, 0.0, 1.0], [0.6, 0.8, 0.0]), b"", row([1.0, 0.0])], query
    )
    share = embeddings.PIECE_SHARE
    assert got[0] == pytest.approx(0.6, abs=1e-6)  # one vector: its cosine
    assert got[1] == pytest.approx(
        (1 - share) * 0.0 + share * 1.0, abs=1e-6
    )  # its second sentence is the query
    assert got[2:] == [None, None]  # empty, or another dimension: nothing comparable


def test_decorate_embeds_only_the_query_never_stored_text(pet_memory, stub):
    stub.requests.clear()
    answer = services.memory_decorate(
        memory=pet_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert stub.inputs() == [QUESTION]
    assert answer["context"]["recalled"]


def test_decorate_reads_the_words_candidates_while_the_query_is_embedded(pet_memory, stub, monkeypatch):
    # The stub answers the query's embedding only once the index's word candidates are read:
    # decorate finds the paraphrase only if the embedding ran beside those reads, not before them.
    stub.requests.clear()
    stub.hold = threading.Event()
    read_candidates = recall_reads.candidates

    def candidates(**kwargs):
        stub.hold.set()
        return read_candidates(**kwargs)

    monkeypatch.setattr(recall_reads, "candidates", candidates)
    answer = services.memory_decorate(
        memory=pet_memory,
        messages=[{"role": "user", "content": "Which puppy lives with me?"}],
        budget_tokens=300,
        store=False,
    )
    assert stub.inputs() == ["Which puppy lives with me?"]
    assert PET_LINE in _recalled(answer)


def test_a_decorate_whose_history_fits_whole_embeds_nothing(cast, stub):
    _configure(cast.project_a, stub)
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, CORPUS["filler"][:2])
    drain()
    memory.refresh_from_db()
    stub.requests.clear()
    answer = services.memory_decorate(
        memory=memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=4000, store=False
    )
    assert answer["usage"]["dropped_messages"] == 0 and len(answer["messages"]) == memory.message_count + 1
    assert stub.inputs() == []


def test_an_unexpected_error_in_the_query_embedding_reaches_the_caller(cast, monkeypatch):
    class Broken:
        name, model = "broken", "m"

        def embed(self, texts):
            raise RuntimeError("not an EmbeddingFailed")

    monkeypatch.setattr(embeddings.query, "provider_for", lambda project: Broken())
    with pytest.raises(RuntimeError, match="not an EmbeddingFailed"):
        embeddings.embed_query_soon(cast.project_a, QUESTION)()


def _recalled(answer) -> str:
    """The recall block's snippets (the rules also take the pet line as a fact, so the facts
    block holds "Biscuit" whatever recall does)."""
    return " ".join(hit["snippet"] for hit in answer["context"]["recalled"])


def test_a_paraphrase_with_no_shared_word_is_recalled_through_fusion(pet_memory, cast):
    found = services.memory_decorate(
        memory=pet_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" in _recalled(found)
    assert recall.query_terms(QUESTION) == ["name", "dog"]  # nothing lexical to match the beagle line
    cast.project_a.model_config = {}
    cast.project_a.save(update_fields=["model_config"])
    pet_memory.refresh_from_db()
    lexical = services.memory_decorate(
        memory=pet_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" not in _recalled(lexical)
    assert "User has a beagle named Biscuit" in lexical["context_text"]  # the fact, not a recalled snippet


def test_a_model_change_re_embeds_in_the_background_without_mixing_spaces(pet_memory, stub, cast):
    _configure(cast.project_a, stub, model="stub-embed-2")
    pet_memory.refresh_from_db()
    stub.requests.clear()
    # Before the re-index the old vectors are ignored: fusion reads only the current model's space.
    answer = services.memory_decorate(
        memory=pet_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" not in _recalled(answer)
    step = embeddings.backfill(memory_id=pet_memory.id, limit=5)
    assert step["dropped"] > 0 and step["embedded"] == 5 and step["remaining"] > 0
    while embeddings.backfill(memory_id=pet_memory.id, limit=5)["remaining"]:
        pass
    assert set(RecallVector.objects.filter(memory=pet_memory).values_list("model", flat=True)) == {
        "openai:stub-embed-2#pieces"
    }
    assert (
        RecallVector.objects.filter(memory=pet_memory).count()
        == Entry.objects.filter(memory=pet_memory, kind="message", committed=True).count()
    )
    again = services.memory_decorate(
        memory=pet_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" in _recalled(again)


def test_a_background_step_embeds_no_more_than_its_share_of_text(pet_memory, stub, cast):
    _configure(cast.project_a, stub, model="stub-embed-2")
    stub.requests.clear()
    step = embeddings.backfill(memory_id=pet_memory.id, max_chars=300)
    assert step["embedded"] >= 2 and step["remaining"] > 0
    assert embeddings.text_chars(stub.inputs()) <= 300


def test_a_long_report_is_embedded_by_bounded_jobs_that_queue_the_rest(pet_memory, stub):
    lines = [f"Entry {i}: the harbour crane lifted container {i} onto the ship. " * 4 for i in range(60)]
    services.memory_decorate(memory=pet_memory, messages=[{"role": "user", "content": "The crane log:"}])
    services.report_accept(
        memory=pet_memory, messages=[{"role": "assistant", "content": line} for line in lines], failures=[]
    )
    stub.requests.clear()
    per_job = []
    while services.outbox_process_next():
        per_job.append(embeddings.text_chars(stub.inputs()) - sum(per_job))
    assert sum(per_job) > 2 * embeddings.CHUNK_CHARS and len(per_job) >= 3
    assert max(per_job) <= embeddings.CHUNK_CHARS
    assert Outbox.objects.filter(memory=pet_memory, kind="vectors").count() == len(per_job) - 1
    model = embeddings.model_key(embeddings.provider_for(pet_memory.project))
    assert not embeddings.VectorStore.missing(memory_id=pet_memory.id, model=model, limit=1)


def test_vectors_of_the_old_one_vector_layout_are_replaced_in_the_background(pet_memory, stub):
    RecallVector.objects.filter(memory=pet_memory).update(
        model="openai:stub-embed-1"
    )  # as stored before pieces
    stub.requests.clear()
    while embeddings.backfill(memory_id=pet_memory.id, limit=5)["remaining"]:
        pass
    assert set(RecallVector.objects.filter(memory=pet_memory).values_list("model", flat=True)) == {
        "openai:stub-embed-1" + embeddings.LAYOUT
    }
    assert PET_LINE in stub.inputs()


def test_a_provider_outage_leaves_decorate_working_and_lexical(pet_memory, stub):
    stub.status = 503
    answer = services.memory_decorate(
        memory=pet_memory,
        messages=[{"role": "user", "content": "Tell me about Biscuit"}],
        budget_tokens=300,
        store=False,
    )
    assert "Biscuit" in answer["context_text"]  # the lexical half still works


def test_an_uncommitted_message_loses_its_vector(pet_memory):
    entry = Entry.objects.filter(memory=pet_memory, content=PET_LINE).get()
    services.entries_set_committed(memory=pet_memory, entry_ids=[entry.id], committed=False)
    assert not RecallVector.objects.filter(entry_id=entry.id).exists()


@pytest.mark.skipif(not embeddings.available_local(), reason="the local model is not installed")
def test_the_local_model_puts_a_paraphrase_nearer_than_an_unrelated_sentence():
    provider = embeddings.LocalProvider()
    query, pet, other = provider.embed([QUESTION, PET_LINE, "The quarterly budget review is on Monday."])
    assert len(query) == 384
    assert sum(a * b for a, b in zip(query, pet, strict=True)) > sum(
        a * b for a, b in zip(query, other, strict=True)
    )


def test_forgetting_a_memory_removes_its_vectors_and_counts_them(pet_memory):
    vectors = RecallVector.objects.filter(memory=pet_memory).count()
    receipt = services.memory_delete(memory=pet_memory)
    assert vectors > 0 and receipt["index_rows"] >= vectors
    assert not RecallVector.objects.filter(memory_id=pet_memory.id).exists()


def test_each_message_has_one_row_and_a_search_reads_a_bounded_number_of_them_whole(pet_memory, monkeypatch):
    before = RecallVector.objects.filter(memory=pet_memory).count()
    ids = list(Entry.objects.filter(memory=pet_memory, kind="message").values_list("id", flat=True))
    embeddings.embed_entries(memory_id=pet_memory.id, entry_ids=ids)  # again: replaced, not added
    assert RecallVector.objects.filter(memory=pet_memory).count() == before == len(ids)
    read = []
    real = embeddings.VectorStore.at_seqs
    monkeypatch.setattr(
        embeddings.VectorStore, "at_seqs", lambda **kw: read.extend(rows := real(**kw)) or rows
    )
    model = RecallVector.objects.filter(memory=pet_memory).values_list("model", flat=True).first()
    found = embeddings.neighbourhood(
        memory_id=pet_memory.id,
        model=model,
        query=[1.0] + [0.0] * 63,
        limit=20,
        prev_share=0.3,
        sample=5,
        candidates=3,
    )
    assert (
        len(ids) > 5 + 2 * 3 and len(read) <= 5 + 2 * 3
    )  # the newest 5, 3 by their codes and the rows before them
    assert len(found.hits) == len(read)


# --- the local model (the default) --------------------------------------------------------------

needs_local = pytest.mark.skipif(not embeddings.available_local(), reason="the local model is not installed")
REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "data" / "minilm_reference.json").read_text())
FILLERS = [
    "The quarterly budget review moved to Thursday afternoon.",
    "Remember to send the slides before the board meeting.",
    "The printer on the third floor is jammed again.",
    "Our train leaves the central station at half past eight.",
    "Please book the large conference room for the workshop.",
    "The invoice for the catering was paid last week.",
    "I finished reading the report on solar panel costs.",
    "Traffic on the ring road was terrible this morning.",
    "The new laptop arrives with a faster processor.",
    "We should update the spreadsheet with the March figures.",
]


@needs_local
def test_the_local_runtime_gives_the_vectors_of_the_reference_implementation():
    # tests/data/minilm_reference.json: sentence-transformers on torch (bench/embed_compare.py), once.
    got = embeddings.LocalProvider().embed(REFERENCE["texts"])
    assert len(got) == len(REFERENCE["texts"]) and all(len(v) == 384 for v in got)
    for text, mine, theirs in zip(REFERENCE["texts"], got, REFERENCE["vectors"], strict=True):
        cosine = sum(a * b for a, b in zip(mine, theirs, strict=True)) / math.sqrt(sum(b * b for b in theirs))
        assert cosine >= 0.999, text[:40]


def _long_memory(project, vectors: dict[str, list[float]], n: int) -> tuple:
    """A memory of n messages built in bulk: the pet line first, then the fillers over and over
    (their vectors reused), each with its row of vectors and its lexical index rows."""
    memory, _ = services.memory_create(project=project)
    texts = [PET_LINE] + [FILLERS[i % len(FILLERS)] for i in range(1, n)]
    entries = Entry.objects.bulk_create(
        [
            Entry(
                memory=memory,
                seq=i + 1,
                turn=i // 2 + 1,
                kind="message",
                role="user" if i % 2 == 0 else "assistant",
                content=text,
                tokens=message_tokens({"content": text}),
            )
            for i, text in enumerate(texts)
        ]
    )
    Memory.objects.filter(pk=memory.pk).update(
        last_seq=n,
        last_turn=(n + 1) // 2,
        message_count=n,
        token_count=sum(e.tokens for e in entries),
        background_upto_seq=n,
    )
    rows = list(Entry.objects.filter(memory=memory).values_list("id", "seq", "content"))
    recall.index_entries(memory_id=memory.id, entry_ids=[e for e, _, _ in rows])
    model = embeddings.model_key(embeddings.LocalProvider())
    embeddings.VectorStore.put(
        memory_id=memory.id, model=model, items=[(e, s, vectors[t]) for e, s, t in rows]
    )
    memory.refresh_from_db()
    return memory, model


@needs_local
def test_a_message_older_than_any_scan_window_is_found_by_meaning_alone(cast, settings):
    settings.THREADLESS_EMBEDDINGS = "local"
    old_cap = 2000  # the newest rows a search used to read; the first message sits past it
    vectors = dict(
        zip([PET_LINE, *FILLERS], embeddings.LocalProvider().embed([PET_LINE, *FILLERS]), strict=True)
    )
    memory, model = _long_memory(cast.project_a, vectors, old_cap + 100)
    query = embeddings.embed_query(cast.project_a, QUESTION)
    assert query[0] == model
    hits = embeddings.nearest(memory_id=memory.id, model=model, query=query[1], limit=5)
    assert hits[0][1] == 1  # seq 1: the pet line
    answer = services.memory_decorate(
        memory=memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" in _recalled(answer)
    assert recall.query_terms(QUESTION) == ["name", "dog"] and not any(
        w in f.lower() for f in FILLERS for w in ("name", "dog", "beagle")
    )


def test_a_row_stored_out_of_order_joins_the_codes_a_process_keeps(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    texts = ["first thing", "second thing", "third thing", "fourth thing"]
    Entry.objects.bulk_create(
        [
            Entry(memory=memory, seq=i + 1, turn=i + 1, kind="message", role="user", content=t)
            for i, t in enumerate(texts)
        ]
    )
    ids = dict(Entry.objects.filter(memory=memory).values_list("seq", "id"))
    store = embeddings.VectorStore
    store.put(memory_id=memory.id, model="test:codes", items=[(ids[s], s, [0.0, 1.0]) for s in (2, 3, 4)])
    query = [0.6, 0.8]
    codes = embeddings.store.codes_for(memory.id, "test:codes", 2)
    assert codes.best(embeddings.store.query_bits(query, 1), 99, 10) == [2, 3, 4]
    store.put(
        memory_id=memory.id, model="test:codes", items=[(ids[1], 1, [0.6, 0.8])]
    )  # a re-index, older seq
    assert sorted(
        embeddings.store.codes_for(memory.id, "test:codes", 2).best(
            embeddings.store.query_bits(query, 1), 99, 10
        )
    ) == [2, 3, 4]  # not yet: rows after the last seq only
    codes.read_at -= embeddings.CODE_CACHE_SECONDS + 1
    assert sorted(
        embeddings.store.codes_for(memory.id, "test:codes", 2).best(
            embeddings.store.query_bits(query, 1), 99, 10
        )
    ) == [1, 2, 3, 4]


def test_codes_are_the_vectors_sign_bits_in_64_bit_words():
    assert embeddings.codes_of([[0.5, -0.1, 0.2]]) == bytes([0b101]) + bytes(7)
    assert len(embeddings.codes_of([[0.1] * 384, [-0.1] * 384])) == 2 * 48
    assert embeddings.codes_of([[1.0] * 65]) == b"\xff" * 8 + b"\x01" + bytes(7)


def test_without_the_local_runtime_the_default_is_lexical_with_one_log_line(
    cast, settings, monkeypatch, caplog
):
    import providers.embeddings as clients

    settings.THREADLESS_EMBEDDINGS = "local"
    monkeypatch.setattr(clients, "local_model_dir", lambda: None)
    clients.available_local.cache_clear()
    monkeypatch.setattr(embeddings.provider, "_LEXICAL_NOTED", set())
    try:
        memory, _ = services.memory_create(project=cast.project_a)
        converse(memory, [["Tell me about the red bicycle in the garage.", "It has a flat tyre."]])
        with caplog.at_level("WARNING", logger="threadless.embeddings"):
            assert embeddings.provider_for(cast.project_a) is None and not embeddings.enabled(cast.project_a)
            answer = services.memory_decorate(
                memory=memory,
                messages=[{"role": "user", "content": "bicycle?"}],
                budget_tokens=60000,
                store=False,
            )
            drain()
        assert "red bicycle" in json.dumps(answer)  # the window, read lexically as with off
        assert len([r for r in caplog.records if "recall stays lexical" in r.getMessage()]) == 1
        assert not RecallVector.objects.filter(memory=memory).exists()
    finally:
        clients.available_local.cache_clear()


def test_two_workers_storing_the_same_messages_vector_at_once_both_succeed(transactional_db, cast):
    """Two outbox rows of one memory can overlap (a row re-reads from the memory's processed mark),
    so two pool processes may embed one message at the same moment: the second write waits for the
    first and replaces it instead of failing on the key."""
    memory, _ = services.memory_create(project=cast.project_a)
    entry = Entry.objects.create(memory=memory, seq=1, turn=1, kind="message", role="user", content="hi")
    store, model = embeddings.VectorStore, "test:race"
    stored, release, errors = threading.Event(), threading.Event(), []

    def other_worker():
        try:
            with transaction.atomic():  # its row is written, not yet committed
                store.put(memory_id=memory.id, model=model, items=[(entry.id, 1, [1.0, 0.0])])
                stored.set()
                release.wait(10)
        except Exception as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)
        finally:
            db_connection.close()

    worker = threading.Thread(target=other_worker)
    worker.start()
    assert stored.wait(10)
    threading.Timer(0.5, release.set).start()
    store.put(memory_id=memory.id, model=model, items=[(entry.id, 1, [0.0, 1.0])])
    worker.join(10)
    assert errors == []
    row = RecallVector.objects.get(entry_id=entry.id)
    assert list(embeddings.store.unpack(row.vector)) == [0.0, 1.0] and row.model == model


# --- the local model's queries, batched per process -------------------------------------------------

CONCURRENT_QUESTIONS = [
    QUESTION,
    "Who taught me to sail?",
    "When is the budget review?",
    "Which room is booked for the workshop?",
]


def _holding_batches(monkeypatch, queued: int, fail_call: int | None = None) -> list:
    """The process's query batcher with a call running that holds until `queued` queries wait
    behind it (so they share the next call), call number `fail_call` failing; every call after
    the holding one recorded as (texts, vectors or "failed")."""
    import time

    from providers import embeddings as clients

    batcher, real = clients._QUERIES, clients._QUERIES.embed
    calls: list = []
    running = threading.Event()

    def embed(texts):
        if not running.is_set():
            running.set()
            deadline = time.monotonic() + 5
            while len(batcher._waiting) < queued and time.monotonic() < deadline:
                time.sleep(0.002)
            return real(texts)
        if len(calls) == fail_call:
            calls.append((list(texts), "failed"))
            raise embeddings.EmbeddingFailed("the model failed")
        vectors = real(texts)
        calls.append((list(texts), vectors))
        return vectors

    monkeypatch.setattr(batcher, "embed", embed)
    batcher.submit("a query of another decorate, already running")
    assert running.wait(5)
    return calls


def _decorate_at_once(memory, questions: list[str]) -> dict[str, dict]:
    """Each question decorated in a thread of its own, all at once (store=False)."""
    from django.db import connection

    answers: dict[str, dict] = {}
    start = threading.Barrier(len(questions))

    def one(question):
        try:
            start.wait(5)
            answers[question] = services.memory_decorate(
                memory=memory,
                messages=[{"role": "user", "content": question}],
                budget_tokens=300,
                store=False,
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(q,)) for q in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return answers


@pytest.fixture
def local_memory(cast, settings, transactional_db):
    settings.THREADLESS_EMBEDDINGS = "local"
    texts = [PET_LINE, LONG_TURN, *FILLERS]
    vectors = dict(zip(texts, embeddings.LocalProvider().embed(texts), strict=True))
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [[PET_LINE, "Biscuit sounds lovely."], [LONG_TURN, "How fun!"]])
    converse(memory, [[FILLERS[i], FILLERS[i + 1]] for i in range(0, len(FILLERS) - 1, 2)] * 2)
    drain()
    rows = list(Entry.objects.filter(memory=memory, kind="message").values_list("id", "seq", "content"))
    model = embeddings.model_key(embeddings.LocalProvider())
    embeddings.VectorStore.put(
        memory_id=memory.id,
        model=model,
        items=[(e, s, [vectors.get(t) or embeddings.LocalProvider().embed([t])[0]]) for e, s, t in rows],
    )
    memory.refresh_from_db()
    return memory


@needs_local
def test_concurrent_decorates_share_a_model_call_and_recall_what_one_at_a_time_recalls(
    local_memory, monkeypatch
):
    calls = _holding_batches(monkeypatch, queued=len(CONCURRENT_QUESTIONS))
    together = _decorate_at_once(local_memory, CONCURRENT_QUESTIONS)
    assert sorted(calls[0][0]) == sorted(CONCURRENT_QUESTIONS)  # one model call for the four
    batched = dict(zip(calls[0][0], calls[0][1], strict=True))
    for question in CONCURRENT_QUESTIONS:
        alone = embeddings.LocalProvider().embed([question])[0]
        assert sum(a * b for a, b in zip(batched[question], alone, strict=True)) >= 0.9999
        one_at_a_time = services.memory_decorate(
            memory=local_memory,
            messages=[{"role": "user", "content": question}],
            budget_tokens=300,
            store=False,
        )
        assert together[question]["context"]["recalled"] == one_at_a_time["context"]["recalled"]
    assert "Biscuit" in _recalled(together[QUESTION])  # by meaning: no word of the question is in it


@needs_local
def test_a_failed_model_call_leaves_only_the_decorates_it_held_lexical(local_memory, monkeypatch):
    calls = _holding_batches(monkeypatch, queued=2, fail_call=0)
    asked = [QUESTION, f"{QUESTION} "]
    answers = _decorate_at_once(local_memory, asked)
    assert len(calls) == 1 and sorted(calls[0][0]) == sorted(asked) and calls[0][1] == "failed"
    assert not any("Biscuit" in _recalled(answers[q]) for q in asked)  # lexical: no word of theirs is in it
    again = services.memory_decorate(
        memory=local_memory, messages=[{"role": "user", "content": QUESTION}], budget_tokens=300, store=False
    )
    assert "Biscuit" in _recalled(again) and len(calls) == 2  # the next call embeds
