"""Reading a query: "when" and list questions, and the times a message mentions, in linear time."""

from __future__ import annotations

from memories.recall import query as query_parsing
from memories.recall import text as message_text


def test_time_words_and_when_questions_are_read_in_linear_time():
    assert query_parsing.WHEN.match("When did you go?") and query_parsing.WHEN.match(
        "In what year did it open?"
    )
    assert not query_parsing.WHEN.match("What did you do when it rained?")
    for text in ("We met two weeks ago.", "see you next Friday", "back in May", "yesterday"):
        assert message_text.TIME.search(text), text
    assert not message_text.TIME.search("We met at the lake.")
    for hostile in ("1" * 50_000 + " " * 50_000 + "x", "last " * 20_000, " " * 100_000 + "ago"):
        assert message_text.TIME.search(hostile) is None
        assert query_parsing.WHEN.match(hostile) is None


def test_list_questions_are_told_from_questions_about_one_thing_in_linear_time():
    for text in (
        "What activities has Melanie done with her family?",
        "Which cities has Jon visited?",
        "What has Melanie painted?",
        "Where has Maria made friends?",
        "What kinds of books does Ana read?",
        "What do Jon and Gina both like?",
        "How many children does Melanie have?",
        "What are the names of John's children?",
    ):
        assert query_parsing.LIST.search(text[: query_parsing.LIST_CHARS]), text
    for text in (
        "What did Melanie paint recently?",
        "What is Caroline's identity?",
        "What does Gina's tattoo symbolize?",
        "When did Melanie go camping?",
        "What was grandma's gift to Caroline?",
        "Who is Jon's favourite?",
        "What kind of books does Caroline have?",
    ):
        assert not query_parsing.LIST.search(text[: query_parsing.LIST_CHARS]), text
    for hostile in (
        "what " + "has " * 30_000,
        "which " + "a" * 100_000,
        "what has " + "x " * 50_000 + "ed",
        "what " + " " * 100_000 + "s",
    ):
        assert query_parsing.LIST.search(hostile[: query_parsing.LIST_CHARS]) is None


def test_dates_in_a_question_are_read_and_left_out_of_its_words():
    words, dates = query_parsing.query_dates(
        "What happened on 16 June, 2023, on March 3rd and in May 2023 (2023-07-01)?"
    )
    assert dates == [(2023, 6, 16), (None, 3, 3), (2023, 5, None), (2023, 7, 1)]
    assert "june" not in query_parsing.query_terms(words) and "happened" in query_parsing.query_terms(words)
    assert query_parsing.query_dates("May I ask something?")[1] == []
