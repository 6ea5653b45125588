"""providers.minilm: the texts' length groups, and the model's vectors whatever company a text keeps
in a call (its reference vectors: tests/memories/test_embeddings.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from providers.embeddings import available_local
from providers.minilm import GROUP_TOKENS, PAD_SLACK, groups


@given(st.lists(st.integers(min_value=2, max_value=256), max_size=80))
def test_groups_hold_every_text_once_and_pad_within_the_slack(lengths):
    runs = groups(lengths)
    assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
    for run in runs:
        longest = max(lengths[i] for i in run)
        padded = len(run) * longest
        assert len(run) == 1 or (
            padded <= PAD_SLACK * sum(lengths[i] for i in run) and padded <= GROUP_TOKENS
        )


def test_a_long_text_does_not_pad_the_short_ones():
    assert groups([12, 250, 11, 13]) == [[2, 0, 3], [1]]


@pytest.mark.skipif(not available_local(), reason="the local model is not installed")
def test_a_text_gets_the_same_vector_alone_and_in_a_call_with_others():
    import numpy

    from providers.embeddings import LocalProvider

    texts = [
        "What's the name of my dog?",
        "ok",
        "I have a beagle, Biscuit, who sleeps on the sofa all day. " * 12,
        "Wir fahren im Sommer mit dem Zug nach Wien.",
        "The quarterly budget review moved to Thursday afternoon.",
    ]
    provider = LocalProvider()
    together = numpy.array(provider.embed(texts))
    alone = numpy.array([provider.embed([text])[0] for text in texts])
    assert together.shape == (5, 384)
    assert (together * alone).sum(axis=1).min() >= 0.9999
    assert numpy.allclose(numpy.linalg.norm(together, axis=1), 1, atol=1e-5)
