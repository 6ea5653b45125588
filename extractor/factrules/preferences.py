"""Rules that extract what the user likes, dislikes, prefers and names as a favourite."""

from __future__ import annotations

import re

from .fragments import NO_VALUE, PETS, PLURALS, PRONOUNS, RELATIVES, REST
from .lexicons import NOT_JOB_MODIFIERS, ONE_THING, REACTION_WORDS
from .rule import Groups, Rule
from .values import clean_object, slot_key


def _prefer(m):
    first, second = m.group(1).strip(), m.group(2).strip()
    if any(w in REACTION_WORDS or w in ("not", "never") for w in (first + " " + second).lower().split()):
        return None
    return f"preference:{slot_key(first)}", f"User prefers {first} over {second}"


def _each(obj: str) -> list[str]:
    """ "hiking, skiing and chess" is three things; "fish and chips" one."""
    if obj.lower() in ONE_THING or not re.search(r"\s(?:and|&)\s", obj):
        return [obj]
    parts = [p for p in re.split(r",\s*|\s+(?:and|&)\s+", obj) if p]
    if len(parts) > 4 or any(len(p.split()) > 3 for p in parts):
        return [obj]
    return parts


# "the smell of durian", "the taste of coriander": the preference is about the thing itself.
_SENSE_OF = re.compile(
    r"(?i:the\s+)?(?i:smell|taste|texture|sound|sight|feel|flavou?r|idea|thought)\s+of\s+(?=\S)"
)
# The key leaves out the setting ("loud music in cafés", "hiking in the mountains"): two writers label it so
# (not "reading manga in the original", which says what is read).
_SETTINGS = (
    "rain|snow|sun|sunshine|mountains?|hills|woods|forest|park|parks|beach|beaches|sea|city|countryside|cafés?|cafes?|pubs?|"
    "bars?|restaurants?|office|gym|mornings?|evenings?|nights?|winter|summer|autumn|spring|weekends?|trains?|buses|"
    r"planes?|public|cinemas?|shops?|supermarkets?|queues?|traffic|dark|morning|post\s+office|kitchen|garden|car"
)
_PREF_TAIL = re.compile(
    r"(?<=\w)\s++(?:in|at|on|during)\s++(?:the\s++|a\s++)?(?:[\w\-']+\s+)?(?i:" + _SETTINGS + r")$"
)
# Nor a length or size before the thing, nor the classes it comes in ("long voice messages" is voice messages,
# "Bollywood dance classes" Bollywood dance): the labelled sets key them so.
_PREF_SIZE = re.compile(
    r"(?i:long|short|big|small|little|huge|tiny|massive|good|nice|proper|decent)\s++(?=\S+\s)"
)
_PREF_FORM = re.compile(r"(?<=\w)\s++(?i:class(?:es)?|lessons?|sessions?|courses?)$")


def _pref_key(obj: str) -> str:
    obj = obj[m.end() :] if (m := _SENSE_OF.match(obj)) else obj
    if len(obj) <= 80:
        obj = (
            _PREF_FORM.sub("", _PREF_TAIL.sub("", obj[m.end() :] if (m := _PREF_SIZE.match(obj)) else obj))
            or obj
        )
    return slot_key(obj)


def _like(m):
    obj = clean_object(m.group(1))
    if not obj:
        return None
    if _ONES_OWN.match(obj):
        return None
    return [_one_preference(o, "likes") for o in _each(obj)]


# 0: "I love my wife Tala", "I love my kids": a person or pet of the user's, said by the possessive (not a
# taste).
_ONES_OWN = re.compile(
    r"(?i:my|our)\s+(?:(?i:little|baby|new|old|two|three|lovely|amazing|wonderful|beautiful)\s+)?(?i:"
    + RELATIVES
    + r"|kids?|children|family|friends?|boss|team|colleagues?|"
    + PETS
    + r"|"
    + PLURALS
    + r")(?![\w'])"
)


def _dislike(m):
    obj = clean_object(m.group(1))
    if not obj:
        return None
    return [_one_preference(o, "dislikes") for o in _each(obj)]


# 0: "I love bouldering and hate running": a part that opens with its own verb keeps that verb's sense.
_PART_VERB = re.compile(
    r"(?i:(?:really\s+|also\s+|kinda\s+)?(love|like|enjoy|adore|hate|dislike|detest|loathe|can't\s+stand))\s+(?=\S)"
)


def _one_preference(part: str, sense: str) -> tuple[str, str]:
    if verb := _PART_VERB.match(part):
        part = part[verb.end() :]
        sense = (
            "dislikes"
            if verb.group(1).lower() in ("hate", "dislike", "detest", "loathe") or "stand" in verb.group(1)
            else "likes"
        )
    return f"preference:{_pref_key(part)}", f"User {sense} {part}"


def _favorite_reversed(m):
    obj, thing = m.group(1), m.group(2).lower()
    if (
        obj.lower() in REACTION_WORDS
        or obj.lower() in PRONOUNS
        or thing in REACTION_WORDS
        or thing in ("person", "people", "human", "one", "thing", "part")
        or re.fullmatch(RELATIVES, obj.lower())
    ):
        return None
    return f"favorite:{_favorite_key(thing)}", f"User's favorite {thing} is {obj}"


# One slot whatever the spelling ("colour" and "color" are one favourite).
_FAVORITE_SPELLINGS = {
    "colour": "color",
    "flavour": "flavor",
    "colours": "color",
    "flavours": "flavor",
    "film": "movie",
    "films": "movie",
}  # "favourite film" is the movie slot


def _favorite_key(thing: str) -> str:
    return slot_key(" ".join(_FAVORITE_SPELLINGS.get(w, w) for w in thing.split()))


def _prefer_one(m):
    obj = clean_object(m.group(1))
    if not obj or any(w in ("over", "to", "rather", "than", "instead") for w in obj.lower().split()):
        return None
    return f"preference:{slot_key(obj)}", f"User prefers {obj}"


def _favorite(m):
    thing = m.group(1).strip().lower()
    obj = clean_object(m.group(2))
    if not obj or thing in REACTION_WORDS or NO_VALUE.match(obj):  # "my fave movie: none really"
        return None
    return f"favorite:{_favorite_key(thing)}", f"User's favorite {thing} is {obj}"


# Up to two adverbs between "I" and the verb ("I kinda hate", "I really can't stand", "I honestly love").
PREF_ADVERBS = (
    r"(?:(?:really|absolutely|just|truly|kinda|kind\s+of|sort\s+of|sorta|honestly|genuinely|seriously|totally|"
    r"literally|actually|so|lowkey|low-key|still|do|deeply|simply)\s+){0,2}"
)
LIKE_VERBS = (
    r"(?i:I\s+"
    + PREF_ADVERBS
    + r"(?:love|like|enjoy|adore)|I(?:'ve|\s+have)\s+(?:always\s+)?(?:loved|liked|enjoyed|adored)|"
    r"(?:I'm|I\s+am)\s+(?:a\s+(?:big\s+|huge\s+)?fan\s+of|really\s+into|into)|"
    r"(?:I'm|I\s+am)\s+(?:really\s+|so\s+|totally\s+|absolutely\s+|quite\s+|kinda\s+|lowkey\s+)?"
    r"(?:crazy\s+about|mad\s+about|passionate\s+about|obsessed\s+with|keen\s+on|hooked\s+on|big\s+on|fond\s+of|"
    r"partial\s+to|a\s+sucker\s+for)|I\s+(?:can't|cannot)\s+get\s+enough\s+of)"
)
DISLIKE_VERBS = (
    r"(?i:I\s+"
    + PREF_ADVERBS
    + r"(?:hate|dislike|detest|loathe)|I(?:'ve|\s+have)\s+(?:always\s+)?(?:hated|disliked|loathed)|"
    r"I\s+"
    + PREF_ADVERBS
    + r"(?:can't|cannot|can\s+not)\s+stand|I\s+(?:really\s+)?(?:don't|do\s+not)\s+(?:really\s+)?(?:like|"
    r"enjoy|eat|drink)|(?:I'm|I\s+am)\s+(?:really\s+|just\s+|honestly\s+)?not\s+(?:really\s+)?(?:a\s+(?:big\s+|huge\s+|great\s+)?fan\s+of|into|keen\s+on|crazy\s+about)|"
    r"(?:I'm|I\s+am)\s+no\s+(?:big\s+)?fan\s+of|I\s+(?:don't|do\s+not)\s+care\s+(?:much\s+)?for|"
    r"(?:I'm|I\s+am)\s+not\s+(?:very\s+|too\s+|that\s+)?(?:fond\s+of|partial\s+to)|I\s+(?:really\s+)?(?:despise|avoid))"
)


def _fan_of(m):
    thing = m.group(1)
    if thing.lower() in REACTION_WORDS | NOT_JOB_MODIFIERS:
        return None
    return f"preference:{_pref_key(thing.lower())}", f"User likes {thing}"


def _form_likes(m):
    """ "love: rain, black coffee. hate: mornings.": a profile's fields."""
    if NO_VALUE.match(m.group(2)) or m.group(2).split()[0].lower() in (
        "nothing",
        "none",
        "when",
        "it",
        "that",
        "this",
        "people",
    ):
        return None
    build = _like if m.group(1).lower() in ("love", "loves", "like", "likes", "into") else _dislike
    return build(Groups(m.group(2).replace(",", " and ")))


FAVORITE_REVERSED = Rule(
    r"([A-Za-z][\w'\-]{1,30}(?:\s+[A-Za-z][\w'\-]{1,30}){0,2})\s+(?i:is|are)\s+my\s+(?i:all-time\s+)?(?i:favou?rite)\s+"
    r"([a-z]{2,20})\s*(?:$|[,.!;])",
    _favorite_reversed,
    0.8,
    slot="favorite",
    alone=True,
)
PREFER_ONE = Rule(
    r"(?i:I\s+(?:much\s+|really\s+|generally\s+|usually\s+)?prefer)\s+([a-z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30}){0,2})"
    r"\s*(?:$|[.!;])",
    _prefer_one,
    0.7,
    slot="preference",
    alone=True,
)
FAVORITE_IS = Rule(
    r"(?i:(?:my\s+)?(?:all-time\s+)?(?:favorite|favourite|fav|fave)\s+)([a-z][a-z ]{1,30}?)\s+(?i:is|are)\s+"
    + REST,
    _favorite,
    0.9,
    slot="favorite",
    alone=True,
)
FAVORITE_FIELD = Rule(
    r"(?:(?i:my)\s+)?(?i:(?:all-time\s+)?(?:favorite|favourite|fav|fave)\s+)([a-z]{2,20}(?:\s[a-z]{2,20})?)(?:\s+(?i:of\s+all\s+time|ever))?\s*[:=]\s*"
    + REST,
    _favorite,
    0.85,
    slot="favorite",
    alone=True,
)
LIKE_BY_VERB = Rule(LIKE_VERBS + r"\s+" + REST, _like, 0.8, slot="preference", alone=True)
DISLIKE = Rule(DISLIKE_VERBS + r"\s+" + REST, _dislike, 0.8, slot="preference", alone=True)
LIKE = Rule(
    r"([a-zA-Z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30})?)\s+(?i:is\s+my\s+(?:thing|jam|passion|weakness|obsession|guilty\s+pleasure|happy\s+place))\s*(?:$|[,.!;])",
    _like,
    0.75,
    slot="preference",
    alone=True,
)
PREFER = Rule(
    r"(?i:I\s+(?:much\s+|really\s+|generally\s+)?prefer)\s+"
    + r"([a-z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30}){0,2})"
    + r"\s+(?i:over|to|rather\s+than)\s+([a-z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30}){0,2})\s*(?:$|[,.!;])",
    _prefer,
    0.8,
    slot="preference",
    alone=True,
)
# "I'm a huge football fan", "massive Arsenal fan here": a fan of a thing likes it.
FAN_OF = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+(?:(?i:huge|big|massive|great|diehard|die-hard|lifelong|mad|crazy|total)\s+)+"
    r"([a-zA-Z][a-z\-]{2,20})\s+(?i:fan)\b",
    _fan_of,
    0.75,
    slot="preference",
    alone=True,
)
# A profile's "love: …" / "hate: …" fields.
FORM_LIKES = Rule(
    r"((?i:love|loves|like|likes|into|hate|hates|dislike|dislikes|can't\s+stand))\s*:\s*([a-z][a-z\- "
    r"]{1,40}(?:,\s*[a-z][a-z\- ]{1,40}){0,3})\s*(?:$|[.!;])",
    _form_likes,
    0.75,
    slot="preference",
    alone=True,
)
# "fav colour mauve, fav snack samphire crisps": a favourite with no verb.
FAVORITE_ALLTIME = Rule(
    r"(?i:(?:all-time\s+)?(?:favorite|favourite|fav|fave))\s+((?i:colou?r|food|snack|drink|band|singer|artist|song|film|movie|"
    r"book|author|show|series|game|sport|team|season|animal|flower|fruit|dessert|meal|dish|city|place|holiday|cuisine|beer|wine|"
    r"cheese|biscuit|cake|number|word|podcast|anime|player|club|tea|coffee|sweet|candy|crisps|chips))\s+([a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,2})"
    r"(?=\s*(?:$|[,.!;]))",
    lambda m: (
        m.group(2).split()[0].lower()
        not in (
            "is",
            "are",
            "was",
            "has",
            "of",
            "to",
            "for",
            "ever",
            "and",
            "at",
            "in",
            "the",
            "a",
            "an",
            "would",
            "will",
            "lost",
            "won",
            "just",
            "got",
            "has",
            "had",
            "always",
            "never",
            "sucks",
            "plays",
            "played",
        )
        and _favorite(m)
    ),
    0.75,
    slot="favorite",
    alone=True,
)
