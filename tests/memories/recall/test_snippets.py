"""What a hit shows."""

from __future__ import annotations

from memories.recall import snippets


def test_a_long_message_is_cut_around_the_part_holding_most_query_words():
    text = (
        "The garden needs work this spring, "
        + "and the neighbours keep talking about the fence " * 8
        + "but the tomato seeds for the garden beds are in the blue box in the shed."
    )
    snippet = snippets.snippet(text, ["tomato", "seeds", "garden"])
    # The first "garden" is at the start; the window holding all three words is near the end.
    assert "tomato seeds for the garden beds" in snippet and snippet.startswith("… ")
    assert len(snippet) <= snippets.SNIPPET_CHARS + 4
    # A message with no query word keeps its opening; a huge one is placed without scanning it all.
    assert snippets.snippet(text, ["kettle"]).startswith("The garden needs work")
    huge = "garden " * 50_000 + "tomato seeds"
    assert snippets.snippet(huge, ["garden", "tomato"]).startswith("garden")
