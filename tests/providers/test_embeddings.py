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
