"""How much meaning weighs against the words."""

from __future__ import annotations

from memories.recall import dense
from memories.recall.ranking import RANKING


def test_lexical_coverage_is_the_share_of_the_query_the_best_candidate_says():
    df, total = {"ferry": 2, "hvar": 1, "keep": 40}, 100
    assert dense.lexical_coverage(["ferry", "hvar"], {1: {"ferry", "hvar"}}, df, total) == 1.0
    assert dense.lexical_coverage(["ferry", "hvar"], {}, df, total) == 0.0
    rare = dense.lexical_coverage(["keep", "hvar"], {1: {"hvar"}}, df, total)
    common = dense.lexical_coverage(["keep", "hvar"], {1: {"keep"}}, df, total)
    # Matching the rarer word says more of the query than matching the common one.
    assert 0.5 < rare < 1.0 and 0.0 < common < 0.5
    # A word no message has counts in the query's mass, so a query mostly unmatched covers little.
    assert dense.lexical_coverage(["keep", "extra", "stuff"], {1: {"keep"}}, df, total) < common


def test_the_unsaid_share_is_the_part_of_the_query_no_message_says():
    df, total = {"childhood": 1, "spend": 0, "home": 5}, 24
    assert dense.unsaid_share(["childhood", "home"], df, total) == 0.0
    assert dense.unsaid_share(["spend"], df, total) == 1.0
    share = dense.unsaid_share(["spend", "childhood"], df, total)
    # A word no message has is the rarest there is: it weighs more than the one that occurs once.
    assert 0.5 < share < 1.0
    assert dense.unsaid_share([], df, total) == 0.0


def test_meaning_weighs_most_only_when_the_words_are_unsaid_and_the_nearest_stands_out():
    old = RANKING.dense_weight + (RANKING.dense_weight_weak - RANKING.dense_weight) * 0.6**RANKING.weak_power
    assert dense.dense_weight(0.4, 0.6, 4.0) == RANKING.dense_weight_unsaid > old
    # Either signal alone leaves the coverage curve as it was.
    assert dense.dense_weight(0.4, 0.6, 1.5) == old
    assert dense.dense_weight(0.4, 0.1, 4.0) == old
    # A query naming a speaker has its anchor in the words ("Which cities has Jon visited?").
    assert dense.dense_weight(0.4, 0.6, 4.0, named=True) == old
    # Never below the curve: nothing matched at all already weighs DENSE_WEIGHT_WEAK.
    assert dense.dense_weight(0.0, 1.0, 4.0) == max(RANKING.dense_weight_weak, RANKING.dense_weight_unsaid)
    assert dense.dense_weight(1.0, 0.0, 9.0) == RANKING.dense_weight
