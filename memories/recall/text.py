"""What recall reads off a message's text: its speaker label, its content words, whether it asks,
mentions a time, or talks about the other person. Every function is linear in the text (no
regex with nested repeats)."""

from __future__ import annotations

import re

from memories.recall.query import DAYNAMES, MONTH, STOPWORDS, WORD

_WORD_APOS = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
# A time a message mentions: fixed alternatives, single-word gaps, no nesting (linear time).
TIME = re.compile(
    r"\b(?:yesterday|tonight|tomorrow|recently|(?:last|this|past|next)\s+(?:night|week(?:end)?|month|year|"
    r"summer|winter|spring|fall|autumn|" + DAYNAMES + r")"
    r"|(?:\d+|a|an|one|two|three|four|five|six|few|couple)\s+(?:of\s+)?(?:days?|weeks?|months?|years?)\s+ago"
    r"|" + DAYNAMES + r"|" + MONTH + r")\b",
    re.IGNORECASE,
)
_FIRST_PERSON = frozenset("i my me mine myself we our ours us im ive id".split())
_SECOND_PERSON = frozenset("you your yours yourself youre youve".split())


def speaker(text: str) -> str:
    """The speaker label of a "Name: text" message (lowercased), or "" (no regex: linear)."""
    head, sep, _ = text[:42].partition(":")
    words = head.split()
    if not sep or not 1 <= len(words) <= 3:
        return ""
    if not all(w.replace("-", "").replace("'", "").isalpha() for w in words):
        return ""
    return " ".join(words).lower()


def stem(word: str) -> str:
    """A crude stem, enough to match "dogs" with "dog" and "allergic" with "allergies"."""
    for suffix in ("ies", "es", "ic", "s", "y"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """A message's content words (lowercased, no stopwords, no "Name:" speaker label)."""
    if speaker(text):
        text = text.partition(":")[2]
    return {w for w in WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def is_question(text: str) -> bool:
    """A message that ends with a question mark (no regex: linear)."""
    return text.rstrip().endswith("?")


def text_key(text: str) -> str:
    """A message's text with case and spacing aside (what makes two messages say the same)."""
    return " ".join(text.lower().split())


def about_the_other(text: str, terms, reach: int) -> bool:
    """Whether a message's words matching these query terms (a word starting with a term's first
    five letters, or the reverse, so "painting" meets "painted") all sit within `reach` words of
    "you / your" and none within reach of "I / my / we". Linear in the message."""
    keys = [t[:5] for t in terms]
    if not keys:
        return False
    said = text.partition(":")[2].lower()
    words = [w.replace("'", "").replace("\u2019", "") for w in _WORD_APOS.findall(said)]
    second = False
    for i, w in enumerate(words):
        if any(w.startswith(k) or (len(w) >= 4 and k.startswith(w[:5])) for k in keys):
            near = words[max(0, i - reach) : i + reach + 1]
            if any(x in _FIRST_PERSON for x in near):
                return False
            second = second or any(x in _SECOND_PERSON for x in near)
    return second
