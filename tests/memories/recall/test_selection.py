"""The selection step over the fused candidates."""

from __future__ import annotations

from memories.recall import selection
from memories.recall.hits import Hit, Message
from memories.recall.ranking import RANKING


def test_the_rerank_reads_no_more_than_its_window(cast):
    final = [
        Hit(
            float(i), i, "2024-01-01", Message(i, i, 1, "user", "2024-01-01T00:00:00+00:00", f"Ana: note {i}")
        )
        for i in range(500)
    ]
    out = selection.rerank(final, {}, {"ana"}, True, 10, RANKING)
    assert len(out) == RANKING.rerank_from and out[0].seq == 499
    assert (
        len(selection.rerank(final, {}, set(), False, 300, RANKING)) == 300
    )  # a larger limit is served whole
