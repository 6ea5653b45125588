"""The embeddings client reads at most THREADLESS_UPSTREAM_MAX_BYTES of an answer, decoded."""

from __future__ import annotations

import pytest

from harness.hostile import HostileUpstream, big_json, gzip_bomb, peak_reset, peak_rss
from providers.embeddings import EmbeddingFailed, OpenAIProvider

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def hostile():
    upstream = HostileUpstream()
    yield upstream
    upstream.close()


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]


@pytest.mark.parametrize("answer", ["gzip_bomb", "30_mib_json"])
def test_an_embeddings_answer_past_the_cap_fails_without_being_read_whole(hostile, answer):
    hostile.serve(
        *(("gzip", gzip_bomb(256)) if answer == "gzip_bomb" else ("json", big_json(30, kind="embeddings")))
    )
    provider = OpenAIProvider(model="m", base_url=hostile.url + "/v1")
    before = peak_reset()
    with pytest.raises(EmbeddingFailed, match="the upstream answer is larger than 8 MiB"):
        provider.embed(["what is my dog called?"])
    assert peak_rss() - before < 64 * MiB
    assert hostile.paths == ["/v1/embeddings"]


def test_an_embeddings_answer_within_the_cap_still_works_gzipped(hostile):
    import gzip
    import json

    hostile.serve(
        "gzip", gzip.compress(json.dumps({"data": [{"index": 0, "embedding": [3.0, 4.0]}]}).encode())
    )
    assert OpenAIProvider(model="m", base_url=hostile.url + "/v1").embed(["x"]) == [[0.6, 0.8]]


# --- the local model's query batcher ------------------------------------------------------------


def _held_first_call(calls: list, waiting_for: int, batcher_box: list):
    """An embed function whose first call waits until `waiting_for` queries queue behind it
    (`embed.running` is set once that first call has begun)."""
    import threading
    import time

    def embed(texts):
        calls.append(list(texts))
        embed.running.set()
        if len(calls) == 1:
            deadline = time.monotonic() + 5
            while len(batcher_box[0]._waiting) < waiting_for and time.monotonic() < deadline:
                time.sleep(0.001)
        if any("fail" in t for t in texts):
            raise EmbeddingFailed("the model failed")
        return [[float(len(t))] for t in texts]

    embed.running = threading.Event()
    return embed


def test_queries_that_arrive_while_a_call_runs_share_the_next_call():
    from providers.embeddings import QueryBatcher

    calls: list = []
    box: list = []
    batcher = QueryBatcher(_held_first_call(calls, 3, box))
    box.append(batcher)
    first = batcher.submit("a")
    assert batcher.embed.running.wait(5)
    later = [batcher.submit(text) for text in ("bb", "ccc", "dddd")]
    assert first.result(5) == [1.0]
    assert [f.result(5) for f in later] == [[2.0], [3.0], [4.0]]
    assert calls == [["a"], ["bb", "ccc", "dddd"]]
    assert batcher.submit("eeeee").result(5) == [5.0]  # an idle model: a call at once, alone
    assert calls[-1] == ["eeeee"]


def test_a_failed_call_fails_only_the_queries_it_held():
    from providers.embeddings import QueryBatcher

    calls: list = []
    box: list = []
    batcher = QueryBatcher(_held_first_call(calls, 2, box))
    box.append(batcher)
    first = batcher.submit("fine")
    assert batcher.embed.running.wait(5)
    doomed = [batcher.submit("fail"), batcher.submit("same call")]
    assert first.result(5) == [4.0]
    for future in doomed:
        with pytest.raises(EmbeddingFailed):
            future.result(5)
    assert batcher.submit("next call").result(5) == [9.0]
    assert calls == [["fine"], ["fail", "same call"], ["next call"]]


def test_a_cancelled_query_is_left_out_of_the_call():
    from providers.embeddings import QueryBatcher

    calls: list = []
    box: list = []
    batcher = QueryBatcher(_held_first_call(calls, 2, box))
    box.append(batcher)
    first = batcher.submit("a")
    assert batcher.embed.running.wait(5)
    gone, kept = batcher.submit("gone"), batcher.submit("kept")
    assert gone.cancel()
    assert first.result(5) == [1.0] and kept.result(5) == [4.0]
    assert calls == [["a"], ["kept"]]
