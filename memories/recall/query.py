"""Reading a query: its content words, the dates it names, and whether it asks "when" or for a
list. Every pattern here has fixed alternatives and bounded repeats, no nesting, so matching
runs in linear time."""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_QUERY_TERMS = 12
LIST_CHARS = 300  # a list question is recognised on this many first characters

# Words too common to say anything about what a message is about.
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves im ive id dont does doesnt didnt cant wont know tell
remember please say said again also still yes ok okay hi hello hey thanks thank today anything
something
""".split()
)

WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
DAYNAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# Dates a question names ("on 16 June, 2023", "June 16th", "in May 2023", "2023-06-16").
_DATES = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + MONTH + r"\b,?(?:\s+(\d{4}))?"
    r"|" + MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b,?(?:\s+(\d{4}))?"
    r"|" + MONTH + r",?\s+(\d{4})"
    r"|(\d{4})-(\d{2})-(\d{2}))\b",
    re.IGNORECASE,
)
# A question asking when (matched at its start only).
WHEN = re.compile(
    r"\s*(?:when\b|(?:in\s+)?(?:what|which)\s+(?:year|month|day|date|week)\b"
    r"|how\s+long\s+ago\b)",
    re.IGNORECASE,
)
# A list question, asking for things said in several sessions: a plural noun after "what / which"
# ("What activities…", "Which kinds of books…"; not "What kind of books…", which asks for one kind),
# "has / have" + one or two words + a participle ("What has Ana painted?", "Where has Jo made
# friends?"), "how many", "what are some / the names", or "both" anywhere.
LIST = re.compile(
    r"^\s*(?:(?:what|which)\s+(?:(?:kinds|types|sorts)\s+of\s+)?(?!(?:is|was|does|has|this|kind|type|sort)\b)"
    r"[a-z+/-]{2,}[a-rt-z]s\b|(?:what|where|who|which)\b[^?]{0,60}\b(?:has|have)\s+(?!to\b)(?:\w+\s+){1,2}"
    r"\w+(?:ed|en|ne|de|ght|ld)\b|how\s+many\b|what\s+are\s+(?:some|the\s+names)\b)|\bboth\b",
    re.IGNORECASE,
)

Date = tuple[int | None, int, int | None]  # (year or None, month, day or None)


class Query(NamedTuple):
    """What `search` needs from a query's text."""

    terms: list[str]  # content words, lowercased, de-duplicated, in order (dates taken out)
    dates: list[Date]
    when: bool  # asks when something happened
    is_list: bool  # asks for several things (see Ranking.list_head)


def parse(query: str) -> Query:
    words, dates = query_dates(query)
    return Query(query_terms(words), dates, bool(WHEN.match(query)), bool(LIST.search(query[:LIST_CHARS])))


def query_terms(query: str) -> list[str]:
    """The query's content words (lowercased, de-duplicated, in order)."""
    seen: list[str] = []
    for word in WORD.findall(query.lower()):
        if len(word) < 2 or word in STOPWORDS or word in seen:
            continue
        seen.append(word)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return seen


def query_dates(query: str) -> tuple[str, list[Date]]:
    """(the query without its dates, [(year or None, month, day or None)]) for the dates it names."""
    found = []

    def month(name: str) -> int:
        return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower()[:3]))

    for m in _DATES.finditer(query):
        g = m.groups()
        if g[1]:
            found.append((int(g[2]) if g[2] else None, month(g[1]), int(g[0])))
        elif g[3]:
            found.append((int(g[5]) if g[5] else None, month(g[3]), int(g[4])))
        elif g[6]:
            found.append((int(g[7]), month(g[6]), None))
        elif g[8]:
            found.append((int(g[8]), int(g[9]), int(g[10])))
    return (_DATES.sub(" ", query) if found else query), [d for d in found if 1 <= d[1] <= 12]


def on_date(day: str, dates: list[Date]) -> bool:
    """Whether an ISO day ("2023-06-16") is one of these dates."""
    year, month, date = int(day[:4]), int(day[5:7]), int(day[8:10])
    return any((y is None or y == year) and m == month and (d is None or d == date) for y, m, d in dates)
