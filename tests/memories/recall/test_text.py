"""What recall reads off a message's text."""

from __future__ import annotations

from memories.recall import text as message_text
from memories.recall.ranking import RANKING


def test_talk_about_the_other_is_told_from_talk_about_oneself():
    assert message_text.about_the_other("Kofi: Your sketch is great!", ["sketch"], RANKING.self_reach)
    assert not message_text.about_the_other(
        "Kofi: I love your sketch!", ["sketch"], RANKING.self_reach
    )  # "I" is near too
    assert not message_text.about_the_other("Kofi: My sketches are done.", ["sketch"], RANKING.self_reach)
    assert not message_text.about_the_other("Kofi: The sketch is done.", ["sketch"], RANKING.self_reach)
    assert not message_text.about_the_other("Kofi: Your dog is cute.", [], RANKING.self_reach)
