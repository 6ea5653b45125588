"""Corrections inside one message ("I'm 35, wait no, 36", "I work at Uber. Well, worked."): the clause before
the marker is taken back and a bare value after it read; a re-spelt name gets its accents back. At most three
plain passes over parts of a message of at most MAX_CORRECTED characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .candidate import Candidate, UserMessage
from .clauses import SENTENCE, clauses
from .fragments import FRAMES, HEDGES, NAME, ORG, PLACE, UPPER, WHEN_WORDS
from .lexicons import NATIONALITIES, NOT_INTRO, NOT_NAMES, REACTION_WORDS
from .values import (
    age_fact,
    allergy_fact,
    employer_fact,
    is_proper,
    location_fact,
    name_fact,
    origin_fact,
    plan_fact,
)

# What a correction needs of the extractor: its plain pass over one message (`pipeline.read_message`).
Reader = Callable[[UserMessage, list[Candidate], set[tuple]], None]


# A correction inside one message. "I'm 35, wait no, 36", "I work at Uber. Well,
# worked. Now I'm at Bolt.", "my name is Jon... actually it's Jón", "moving to Uppsala. update: plans
# changed, it's Malmö now": what the sentence before the marker said is taken back, and a bare value
# right after the marker is the new value of the same slot. Linear time: one scan of fixed words.
CORRECTION = re.compile(
    r"\b(?i:(?:actually|wait|sorry|oh)[,.]?\s++no\b(?![\s,.]++(?:longer|more|one|idea|problem|worries|matter|doubt|way|big|offence|offense|pressure|rush|need|thanks)\b)|no[,.]?\s++wait\b|nee[,.]?\s++wacht\b|"
    r"I\s++mean[,.]?\s++I\s++(?:was|did|used\s++to)\b|well[,.]?\s++(?:worked|lived|used\s++to|not\s++anymore)\b|"
    r"plans?\s++(?:have\s++)?changed\b|scratch\s++that\b|actually[,.]?\s++it's\b|or\s++rather\b|"
    r"correction\s*:|,\s*+not\s++anymore\b|sorry[,.]?\s++I\s++meant\b|just\s++kidding\b|jk\b|"
    r"no[,.]?\s++sorry\b(?![\s,.]++(?:for|about|to|if|that|but)\b)|(?<=[^\W\d_])[-–—]{1,2}\s*+sorry,|"
    # 1: "… before but I meant Písek", "I said 42 earlier, I meant 43", "Bobbie... sorry, Bobbi".
    r"(?:,|\bbut)\s*+I\s++meant\b(?!\s++(?:to|it|that|this|what|no|well)\b)|"
    r"(?:\.\.\.|…)\s*+sorry,\s*+(?=" + UPPER + r"[^\W\d_]*+(?:\s*+[,.!]|\s*+$|\s++(?:no|not)\b)))"
)
MAX_CORRECTED = 2000  # a longer message is read as it is (each pass below is linear in it)
_FIX_LEAD = re.compile(
    r"(?:(?i:sorry|I\s+mean|make\s+that|it's|it\s+is|now|I'm\s+at|I\s+am\s+at|at|to|from|in|"
    r"I\s+(?:just\s+)?(?:moved|switched|went|changed|jumped)(?:\s+(?:over|jobs))?\s+to)[\s,]++){0,3}"
)
_FIX_VALUE = {
    "age": (
        re.compile(
            r"(\d{1,3})(?=\s*(?:$|[,.!;)])|\s+(?i:since|as\s+of|now|lol|haha|actually|years?|yrs?|yo)\b)"
        ),
        age_fact,
    ),
    "name": (
        re.compile(NAME + r"(?=$|[\s,.!;])"),
        lambda m: (
            not re.fullmatch(rf"(?i:{WHEN_WORDS})", m.group(1).split()[0])
            and m.group(1).split()[0].lower() not in NOT_INTRO | NATIONALITIES
            and name_fact(m)
        ),
    ),
    "location": (re.compile(PLACE + r"(?=$|[\s,.!;])"), location_fact),
    "origin": (re.compile(PLACE + r"(?=$|[\s,.!;])"), origin_fact),
    "plan": (re.compile(PLACE + r"(?=$|[\s,.!;])"), plan_fact),
    "employer": (re.compile(ORG + r"(?=$|[\s,.!;])"), employer_fact),
    # "allergic to kiwi... wait no, it's mango I'm allergic to".
    "allergy": (
        re.compile(
            r"([a-z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30})?)(?=\s+(?:I'm|I\s+am)\s+(?:allergic|the\s+one)\b|\s*(?:$|[,.!;]))"
        ),
        lambda m: m.group(1).split()[0] not in REACTION_WORDS | _FIX_NOT and allergy_fact(m),
    ),
}
# What "I said … earlier, I meant …" reports of the user's own words is what the marker takes back.
_SAID_BEFORE = re.compile(
    r"^(?:(?i:I\s+(?:said|told\s+you|wrote|put|typed))\s+(?:(?i:that)\s+)?)|(?<!\s)\s++(?i:earlier|before|by\s+mistake)$"
)
_FIX_NOT = frozenset("no not sorry wait I I'm it it's that this my the".lower().split())


def _plain(read: Reader, message: UserMessage, text: str) -> list[Candidate]:
    """The facts of `text` as said in `message`, without the correction pass: each message costs at
    most three more plain passes over parts of itself, whatever the number of markers in it."""
    found: list[Candidate] = []
    read(UserMessage(message.entry_id, message.seq, text), found, set())
    return found


def corrected(read: Reader, message: UserMessage, fix: re.Match, found: list[Candidate]) -> list[Candidate]:
    """`CORRECTION`'s note: `found` (one message's facts) without what the marker takes back, plus the new
    value."""
    text = message.text
    pieces = [
        _SAID_BEFORE.sub("", p.strip())
        for p in SENTENCE.split(text[: fix.start()].rstrip(" ,.;:!-–—…"))
        if p.strip()
    ]
    taken: set[tuple[str, str]] = set()
    # What is taken back: the words after the last comma before the marker ("I'm Dušan, a carpenter from
    # Novi Sad, moving to Zagreb"), else the sentence, else the one before ("update:" alone says nothing).
    tail = pieces[-1].rsplit(",", 1)[-1] if pieces else ""
    tries = [c for c, question in reversed(clauses(tail)) if not question] + pieces[-1:] + pieces[-2:-1]
    for piece in tries:
        if taken := {(c.slot, c.text) for c in _plain(read, message, piece.strip())}:
            break
    if not taken:
        return found
    after = text[fix.end() :].lstrip(" ,.:;!-–—…")
    lead = _FIX_LEAD.match(after).end()
    if len({slot.split(":")[0] for slot, _ in taken}) > 1:
        # "I'm keto and allergic to kiwi... wait no, it's mango": only what the new value puts right is taken
        # back.
        named = {
            slot.split(":")[0]
            for slot, _ in taken
            if slot.split(":")[0] in _FIX_VALUE
            and (m := _FIX_VALUE[slot.split(":")[0]][0].match(after, lead))
            and _FIX_VALUE[slot.split(":")[0]][1](m)
        }
        if len(named) == 1:
            taken = {(slot, said) for slot, said in taken if slot.split(":")[0] in named}
    kept = [c for c in found if (c.slot, c.text) not in taken]
    new = _plain(read, message, after) if len(after.split()) > 1 else []
    if {slot.split(":")[0] for slot, _ in taken} == {"employer"} and _MOVED_TO.search(after, 0, lead + 1):
        # 0: "I work at Oracle - scratch that, I moved to SAP last week": the new employer, not a home.
        moved = {c.text for c in new if c.slot == "location"}
        new = [
            Candidate(
                text=c.text.replace("User lives in ", "User works at ", 1),
                slot="employer",
                confidence=c.confidence,
                source_entry_ids=c.source_entry_ids,
                source_seq=c.source_seq,
            )
            if c.slot == "location"
            else c
            for c in new
        ]
        kept = [c for c in kept if not (c.slot == "location" and c.text in moved)]
    kinds = {c.slot.split(":")[0] for c in kept + new}
    for slot, said in sorted(taken):
        kind = slot.split(":")[0]
        if kind in ("pet", "family") and kind not in kinds and (renamed := _renamed(slot, said, after, lead)):
            new.append(
                Candidate(
                    text=renamed[1],
                    slot=renamed[0],
                    confidence=0.75,
                    source_entry_ids=[message.entry_id],
                    source_seq=message.seq,
                )
            )  # "my dog is called Bobbie... sorry, Bobbi"
            kinds.add(kind)
        if kind in kinds or kind not in _FIX_VALUE:
            continue
        regex, build = _FIX_VALUE[kind]
        if (
            (m := regex.match(after, lead))
            and m.group(1).split()[0].lower() not in _FIX_NOT
            and (built := build(m))
        ):
            new.append(
                Candidate(
                    text=built[1],
                    slot=built[0],
                    confidence=0.75,
                    source_entry_ids=[message.entry_id],
                    source_seq=message.seq,
                )
            )
            kinds.add(kind)
    seen = {(c.slot, c.text) for c in kept}
    return kept + [c for c in new if (c.slot, c.text) not in seen]


def _renamed(slot: str, said: str, after: str, lead: int) -> tuple[str, str] | None:
    """A pet or relative taken back and named again right after the marker: the same fact with the new
    name."""
    old = slot.rsplit(":", 1)[-1]
    m = _FIX_VALUE["name"][0].match(after, lead)
    if slot.count(":") != (1 if slot.startswith("pet:") else 2) or not m or not said.lower().endswith(old):
        return None
    name = m.group(1)
    if (
        name.split()[0].lower() in _FIX_NOT | NOT_NAMES | NOT_INTRO
        or not is_proper(name)
        or name.lower() == old
    ):
        return None  # "my cat's called Mít - no wait, Mít is my sister's cat": not a new name
    return slot[: len(slot) - len(old)] + name.lower(), said[: len(said) - len(old)] + name


_MOVED_TO = re.compile(
    r"(?:(?i:I|I've|I\s+have)\s+)?(?:(?i:just|recently|actually)\s+)?(?i:moved|switched|went|changed)\s+(?:(?i:over|jobs)\s+)?(?i:to)\s"
)
# A name re-spelt with the letters a keyboard or phone dropped ("my name is Hoai An... actually
# Hoài An, with the accent", "sorry I wrote Jaroslaw before, it's Jarosław with the ł"). The new spelling
# must differ from a name the user gave, or from a word the user says they wrote, only in its accents.
RESPELT_CUE = re.compile(r"(?i:\b(?:it's|it\s+is|actually|sorry)[,:]?\s+)" + NAME + r"(?=$|[\s,.!;])")
_WROTE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:wrote|written|typed|put|spelled|spelt|entered)\s+" + NAME + r"(?=$|[\s,.!;])"
)


def _fold(name: str) -> str:
    """The name without its accents: "Hoài An" -> "hoai an", "Jarosław" -> "jaroslaw"."""
    import unicodedata

    plain = unicodedata.normalize(
        "NFKD", name.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O")
    )
    return "".join(c for c in plain if not unicodedata.combining(c)).lower()


def accents_restored(message: UserMessage, found: list[Candidate]) -> list[Candidate]:
    if FRAMES.search(message.text) or HEDGES.search(message.text):
        return found
    given = {_fold(c.text.removeprefix("User's name is ")): c for c in found if c.slot == "name"}
    given.update({_fold(m.group(1)): None for m in _WROTE.finditer(message.text)})
    for m in RESPELT_CUE.finditer(message.text):
        name = m.group(1)
        folded = _fold(name)
        if folded == name.lower() or folded not in given:
            continue  # no accent to restore, or no earlier spelling of the same name
        old = given[folded]
        kept = [c for c in found if c is not old]
        return kept + [
            Candidate(
                text=f"User's name is {name}",
                slot="name",
                confidence=0.8,
                source_entry_ids=[message.entry_id],
                source_seq=message.seq,
            )
        ]
    return found
