"""Clause splitting: a message becomes the clauses the rules read, each marked when it is a question or framed
(reported speech, role-play, instructions). Clauses get a dropped or compound subject back ("Moved to Brno",
"my gf and I are…"), and a self-description list ("I'm Ebere, 38, a surveyor from Owerri") becomes one clause
per part. A clause longer than MAX_CLAUSE is not matched at all.
"""

from __future__ import annotations

import re

from .fragments import (
    ADJECTIVE_ENDINGS,
    DIETS,
    FIELDS,
    FILLER,
    FRAMES,
    HEDGES,
    NAME,
    PET_ADJECTIVES,
    PETS,
    PLACE,
    RELATIVES,
    STAY_WORDS,
    UPPER,
    WHEN_WORDS,
)
from .lexicons import (
    LOWER_STOP,
    NATIONALITIES,
    NOT_INTRO,
    NOT_NAMES,
    NOT_NAMES_ABROAD,
    NOT_PLACES,
    RUN_ON_NOT_AFTER,
    is_job,
)
from .normalize import normalize
from .rule import rule_openings
from .values import is_job_part, is_proper, origin_word_fact

# A form's " / " and " | " too (the run of spaces before it read once, from its start).
SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+|(?<!\s)\s++[/|]\s++")
# "I live in Graz, any good day hikes nearby?": a statement, then the question about it. The split
# is at the first comma followed by a question's opening word; what comes before is no question.
_THEN_QUESTION = re.compile(
    r",\s*+(?=(?i:is|are|am|was|were|do|does|did|can|could|should|would|will|any|anything|how|what|"
    r"which|where|when|who|why|ideas|tips|thoughts|recommendations|suggestions|too)\b)"
)
# Linear time: the leading spaces are taken only from the start of their run (and possessively), so
# a long run of spaces is not rescanned from each of its positions.
# Verbs a diary-style sentence opens with when its subject is the user ("Moved to Brno in May",
# "Started a new job at Bosch") and what follows a comma or an "and" with "I" left out
# ("I grew up in Oslo, moved to Bergen", "I work for Allegro and live in Zürich").
_DROPPED_I_VERBS = (
    r"(?:(?:just|recently|finally|then|later|also)\s+)?(?:moved(?:\s+back)?|relocated|settled|started|began|joined|"
    r"grew\s+up|got\s+(?:a\s+(?:new\s+)?job|hired)|landed|booked|adopted|married)\b"
)
_CLAUSE = re.compile(
    r"(?:(?<!\s)\s++)?(?:,\s*+)?\b(?:but|and|so|although|though|while|because|also)\s++"
    r"(?=(?:(?:now|then|also|currently)\s+)?(?:I|I'm|I've|I'd|my|My|we|we're|we've)\b)"
    r"(?!my\s+(?:friends|family)\s+(?:just\s+|all\s+)?call\s+me\b)"
    r"|(?<=^[Mm]e)\s++and\s++(?=my\s)"
    r"|,\s*+(?=(?:(?:now|currently)\s+)?(?:living|based)\s+in\b|(?:(?:recently|now|just)\s+)?retired\b)"
    r"|,\s*+(?=(?:(?:now|then|so|and\s+now)\s+)?(?:I|I'm|I've|my|My)\s|we\s+(?:have|live|adopted|got|moved|run|own)\s)"
    r"|,\s*+(?=now\s+(?:we|we're|we've)\s|now\s+(?:at|in|with)\s+(?:an?\s|"
    + UPPER
    + r")|originally\s+from\b)"
    r"|,\s*+(?:where|and\s+there)\s++(?=I\s)"
    r"|(?<!\s)\s++[—–-]\s++(?=(?:I|I'm|I've|my|My|we|we're|it's)\s)"
    r"|,\s*+(?=(?:his|her|its|their)\s+name\b)"
    r"|,\s*+(?=(?:my\s+)?(?:fav|fave|favourite|favorite)\s)"
    r"|,\s*+(?=(?:hate|detest|loathe|can't\s+stand|love|adore)\s+(?!(?:it|this|that|them|him|her|you)\b))"
    r"|(?<=[^\W\d_])\s++(?=I\s+(?:finally|eventually)\s)"
    r"|,\s*+(?:and\s++)?(?=" + _DROPPED_I_VERBS[:-3] + r")\s+(?:to|in|at|a|an|up|by)\b)"
    r"|(?:,\s*+(?:and\s++|but\s++)?|(?<!\s)\s++(?:and|but)\s++)(?=(?:(?:now|also|still)\s+)?(?:live|work|stay|reside)\s+(?:in|at|for|as)\b|(?:(?:then|later|now)\s+)?(?:moved|relocated)\s+(?:back\s+)?to\b)"
    r"|(?<!\s)\s++(?:pero|mais|aber|mas|ma|y|et|und|e)\s++(?=(?:vivo|moro|j'habite|ich\s+wohne|abito|ik\s+woon)\s)"
    r"|(?<!\s)\s++(?:and|but)\s++(?=(?:(?:now|currently|still)\s+)?(?:living|staying|residing|based)\s+in\b|(?:(?:very|severely|also)\s+)?allergic\s+to\b)"
    r"|(?<!\s)\s++and\s++(?=(?:(?:then|just|recently|later)\s+)?joined\s+" + UPPER + r")"
    r"|,\s*+(?=(?i:name|age|city|location|town|job|occupation|profession|employer|company|hometown|diet|"
    r"allerg(?:y|ies)|pets?)\s*:)"
    r"|(?:,\s*+|(?<!\s)\s++)and\s++(?=an?\s+(?i:" + PETS + r")\s+(?:named|called)\b)"
)
# After "and" the subject is implied: "I work for Allegro and live in Zürich".
_IMPLIED_I = re.compile(
    r"(?:(?:now|also|still)\s+)?(?:live|work|stay|reside)\s+(?:in|at|for|as)\b|" + _DROPPED_I_VERBS
)
# "Me and | my husband Tariq live in Doha": after "me and", the other person's noun phrase is "we".
_JOINT = re.compile(
    r"(?:my|our)\s+[\w\-]+(?:\s+"
    + NAME
    + r")?\s+(?=(?:live|lived|moved|relocated|are|were|have|just|both|now)\b)"
)
_I_PLURAL = re.compile(r"I\s+(?=(?:are|were|have\s+been|have|'ve)\b)")  # "my gf and | I are moving to…"
# "I'm a nanny, 29, living in Tucson": after the user's own first clause, "living in…" is the user's.
_IMPLIED_IM = re.compile(
    r"(?:(?:now|currently|still)\s+)?(?:living|based|staying|residing)\s+in\b|(?:(?:recently|now|just)\s+)?retired\b|"
    r"(?:(?:very|severely|also)\s+)?allergic\s+to\b"
)
_FIRST_PERSON_START = re.compile(FILLER + r"(?:I|I'm|I\s+am|I've)\b")
_IMPLIED_HAVE = re.compile(r"an?\s+(?i:" + PETS + r")\s+(?:named|called)\b")
# A sentence with its subject left out: "Big fan of knitting", "Allergic to latex", "Moved to Brno".
_DROPPED_SUBJECT = [
    (re.compile(r"(?i:a\s+(?:big|huge|massive|great)\s+fan\s+of)\b"), "I'm "),
    (re.compile(r"(?i:been\s+(?:living|working|based))\b"), "I've "),
    (re.compile(r"(?i:(?:big|huge|massive|great)\s+fan\s+of)\b"), "I'm a "),
    (re.compile(r"(?i:(?:severely\s+|very\s+)?allergic\s+to|married\s+to)\b"), "I'm "),
    (
        re.compile(
            r"(?i:(?:can't|cannot)\s+stand|(?:really\s+)?(?:love|adore|hate|detest|loathe))\s+"
            r"(?!(?i:it|this|that|these|those|you|your|the|when|how|what|him|her|them)\b)"
        ),
        "I ",
    ),
    (
        re.compile(
            r"(?i:visiting)\s+(?="
            + UPPER
            + r")(?!.*\b(?:is|was|would|will|could|can|must|should|sounds|seems|takes|"
            r"costs|feels|makes|looks)\b)"
        ),
        "I'm ",
    ),
    (
        re.compile(
            r"(?i:heading|flying|going|travell?ing|driving|off|moving|relocating|planning\s+to\s+(?:move|relocate|go|fly))\s+to\s+(?="
            + UPPER
            + r")(?!.*\b(?:is|was|would|will|could|"
            r"can|must|should|sounds|seems|takes|costs|feels|makes|looks)\b)"
        ),
        "I'm ",
    ),
    (
        re.compile(
            r"(?i:"
            + _DROPPED_I_VERBS
            + r")(?=\s+(?:to|in|at|a|an|up|by|from|with|for|as|two|three|four|five|our|my)\b)"
        ),
        "I ",
    ),
    (
        re.compile(
            r"(?i:(?:just\s+)?got)\s+(?=(?i:an?|another)\s+" + PET_ADJECTIVES + r"(?i:" + PETS + r")\b)"
        ),
        "I ",
    ),
    # "am a structural engineer", "just turned 60", "still live in Rotterdam", "been at Shopify 4 years".
    (
        re.compile(
            r"(?i:am)\s+(?=(?i:an?|\d{1,3}|from|originally|based|living|allergic|vegan|vegetarian|married|retired|"
            r"currently|now|employed|working|staying|residing)\b)"
        ),
        "I ",
    ),
    (re.compile(r"(?i:(?:just\s+|recently\s+|finally\s+)?turned)(?=\s+\d{1,3}\b)"), "I "),
    (
        re.compile(
            r"(?i:(?:still|now|also|currently)\s+)(?=(?i:live|reside|stay|work)\s+(?:in|at|for|as)\b)"
        ),
        "I ",
    ),
    (re.compile(r"(?i:been\s+(?:at|with|in))\s+(?=" + UPPER + r")"), "I've "),
    (
        re.compile(
            r"(?i:(?:just\s+|finally\s+)?booked)\s+(?=(?i:flights?|tickets?|trains?|ferry|a|an|our|my|two|return|cheap)\b)"
        ),
        "I ",
    ),
    (re.compile(r"(?i:visiting)\s+(?=(?i:my|our)\s)"), "I'm "),
    (re.compile(r"(?i:qualified|retrained|trained)\s+as\b"), "I "),
    (re.compile(r"(?i:work)\s+(?=(?i:as|at|for)\s)"), "I "),
    (re.compile(r"\d{1,3}\s*(?i:years?|yrs?)\s+(?i:old)\b"), "I'm "),
    (
        re.compile(
            r"(?i:working)\s+(?=(?i:as|at|for)\s)(?!.*\b(?:is|was|would|will|could|can|must|should|sounds|seems|takes|sucks|"
            r"feels|looks|means|pays)\b)"
        ),
        "I'm ",
    ),
    (re.compile(r"(?i:not\s+(?:a\s+)?(?:big\s+|huge\s+|great\s+)?fan\s+of)\b"), "I'm "),
    # "live in Ouagadougou, power cuts…", "28 yo nurse living in Doha", "a Tucumán girl through and through".
    (
        re.compile(
            r"(?i:live)\s+in\s+(?="
            + UPPER
            + r")(?![^,.;!?]*\b(?:is|was|would|will|could|can|must|should|sounds|seems|"
            r"takes|costs|feels|makes|looks)\b)"
        ),
        "I ",
    ),
    (
        re.compile(
            r"(?i:(?:so\s+|really\s+|totally\s+|lowkey\s+|low-key\s+)?obsessed\s+with)\s+(?=\w)"
            r"(?!(?i:it|this|that|you|the\s+idea)\b)"
        ),
        "I'm ",
    ),
    (re.compile(r"(?=\d{1,3}\s*(?i:yo|y/o|year\s+old|yr\s+old)\s+[a-z])"), "I'm a "),
    (re.compile(r"(?=(?i:an?)\s+" + UPPER + r"[\w'\-]*\s+(?i:boy|girl|lad|lass|native|guy|gal)\b)"), "I'm "),
]
# One regex for all of them, tried in their order (an alternation tries its branches in order).
_DROPPED_ANY = re.compile(
    "|".join(f"(?P<d{i}>{start.pattern})" for i, (start, _) in enumerate(_DROPPED_SUBJECT))
)
assert _DROPPED_ANY.groups == len(_DROPPED_SUBJECT)  # no group inside: `lastgroup` names the branch
_FILLER = re.compile(FILLER)
# "I work nights as a guard", "I work part-time at Lidl": when and how, not what or where.
_WORK_HOW = re.compile(
    r"(I\s+work)\s+(?:(?i:nights|days|weekends|evenings|mornings|shifts|part-time|full-time|part\s+time|"
    r"full\s+time|remotely|from\s+home|freelance|mostly|mainly)\s+)+(?=(?:as|at|for|in)\b)"
)
# "I currently live in…", "I'm also a nurse", "we still live in…": the adverb says nothing the rules need.
_SUBJECT_ADVERBS = re.compile(
    r"((?:I|I'm|I've|we|we're|we've|I\s+am|we\s+are)\s+)(?:(?i:currently|now|still|also|actually|"
    r"honestly|definitely|totally|absolutely|literally|basically|officially|presently|both|all)\s+)+"
)
_MARRIED = re.compile(r"I\s+(?:got|are|were)\s+married\b")
LONE_NAME = re.compile(NAME)
MAX_CLAUSE = 500  # longer clauses are no plain statement (every object is at most 6 words, a note 300 chars)
# A label before a colon that says the user is about to describe themselves (not "Translate: …").
_LABEL = re.compile(
    r"(?i:(?:just\s+)?(?:to\s+)?(?:(?:a\s+)?(?:quick|short|little|brief|bit\s+of|some)\s+)?(?:my\s+)?"
    r"(?:update|updating|background|context|details|info|intro|bio|profile|correction|address)\b"
    r"[^:.!?\n]{0,30}:\s+)"
)
# A sentence that opens like a question is one all the way ("Do I live in Oslo, or…?").
_QUESTION_START = re.compile(
    FILLER + r"(?i:is|are|am|was|were|do|does|did|can|could|should|would|will|have|has|how|what|which|"
    r"where|when|who|why|shall|may|might|must)\b"
)
# Someone else's words, said at the end: "I'm 5, my daughter says", "…, or so my mum claims".
_SAYS_AFTER = re.compile(
    r",\s*+(?:[\w']+\s+){0,3}(?i:says|said|insists|insisted|claims|claimed|reckons|tells\s+me|told\s+me)\s*[.!]*$"
    r"|,\s*+(?i:said|says|according\s+to)\s+(?:[\w']+\s+){0,2}[\w']+\s*[.!]*$"
)  # "…, said my sister"
# Dictation without punctuation runs statements together: "my name is Kemi Balogun I'm messaging
# about the router I live in Ikeja". A new first-person statement starts at "I'm / I live / my name…"
# after any word but a conjunction or relative word ("my wife and I live…", "the city where I live").
_RUN_ON = re.compile(
    r"(?<=[^\W_])\s++(?=(?:I'm|I've\s+got|I\s+(?:am|live|work|have|moved|grew|was\s+born|stay|study|teach|drive|fix|manage|own)|my\s+name)\b)"
)


def _run_on(clause: str) -> list[str]:
    if len(clause) > MAX_CLAUSE or (
        " I" not in clause and " my" not in clause
    ):  # a long one is read by no rule
        return [clause]
    pieces, start = [], 0
    for m in _RUN_ON.finditer(clause):
        before = clause[max(start, m.start() - 12) : m.start()].split()
        if before and before[-1].lower() not in RUN_ON_NOT_AFTER:
            pieces.append(clause[start : m.start()])
            start = m.end()
    return pieces + [clause[start:]]


# "I'm Ebere, 38, a quantity surveyor from Owerri, living in Abuja": after a short "I'm X", each
# comma-separated part that opens like a self-description is a statement of its own, its "I'm"
# left out. The first part is read alone too ("I'm Ebere"). At most SELF_LIST_PARTS parts.
_SELF_HEAD = re.compile(
    FILLER
    + r"(?:I'm|I\s+am|I\s+(?:work|live|do|teach|run|study)(?=\s))\s+(?!(?i:not|no|never)\b)(?:[^\s,]++\s){0,"
    r"3}[^\s,]++\s*,"
)
_SELF_PART = re.compile(
    r"(?:(?i:and|but)\s+)?(?:(an?\s|\d{1,3}(?:\s+(?i:years?\s+old|yrs?\s+old|yo|y/o))?\s*[.!]?$|(?i:from|originally|living|based|staying|residing|working|joining|"
    r"retired|married|divorced|single|allergic|vegan|vegetarian|now\s+living|currently)\b)|"
    r"((?i:born|raised|brought\s+up)\b)|((?i:grew\s+up)\b))"
)
SELF_LIST_PARTS = 6
# The same list after "Sunniva here," or with no head but the age ("45, machinist, live in
# Łódź"); a part may be a bare job phrase ("barista", "UX designer at Vipps") or "live in / work at …".
_SELF_HEAD_HERE = re.compile(FILLER + r"(?:" + NAME + r"\s+(?i:here|po|hapa|tutaj|burada)|(\d{1,3}))\s*,")
_SELF_VERB = re.compile(r"(?i:live|work|stay)\s+(?:in|at|for)\s")
_SELF_IN = re.compile(r"(?:(?i:now|currently|still)\s+)?(?i:in)\s+(" + UPPER + r"[^\W\d_]+)")
# A profile card with no verb at all ("Haruki, 27, salaryman at Mitsubishi in Okayama", "Quick intro: Csenge,
# 31, animator at Prezi, …", "Hi, this is Bálint, sexton at St Michael's in Sopron"): a name and an age, or a
# name and then a job, open it. Its parts may also be a bare place ("Adebayo, 36, saddler, Ogbomoso"), "X
# originally" or a diet.
_SELF_HEAD_CARD = re.compile(
    FILLER + r"(?:(?i:this\s+is|soy|sono|sou|je\s+suis|sunt|jsem|jestem|ja\s+sam|jeg\s+er|jag\s+är|eg\s+er|"
    r"ik\s+ben|olen|ani|ako\s+si|ako\s+po\s+si|my\s+name\s+is|my\s+name's|name's|saya|aku)\s+)?"
    + NAME
    + r",\s*+(?:(\d{1,2})\s*+(?:,|$)|(?=[^,]+(?:,|$)))"
)
_PLACE_PART = re.compile(PLACE + r"\s*+[.!]?$")
_ORIGIN_PART = re.compile(PLACE + r"\s++(?i:originally)\s*+[.!]?$")
_GLOSS = re.compile(r"[^\W\d_][\w\-]*+\s++\(([A-Za-z][a-z\- ]{1,40})\)")


def _unglossed(part: str) -> str:
    """ "vogelonderzoeker (ornithologist) in Zwolle" -> "ornithologist in Zwolle": a job glossed in
    English."""
    return m.group(1) + part[m.end() :] if (m := _GLOSS.match(part)) and is_job_part(m.group(1)) else part


_CARD_OF_OTHER = re.compile(
    r",\s*+(?i:my|our|his|her|their)\s++(?:(?i:" + RELATIVES + r"|friend|neighbour|neighbor|colleague|boss|"
    r"client|patient|student|son|daughter|kid)\b)(?!\s*+(?:is\b|'s\b|(?i:called|named)\b|" + UPPER + r"))"
)


def _card_head(clause: str):
    """`_SELF_HEAD_CARD`'s head and the statements it makes, or None: the name must be no common word,
    nationality or job, and a head without an age must be followed by a job."""
    if not (head := _SELF_HEAD_CARD.match(clause)) or _CARD_OF_OTHER.search(
        clause
    ):  # (the whole sentence: `_self_list`)
        return None
    name = head.group(1)
    if (
        any(
            w.lower() in NOT_INTRO | NOT_NAMES | NATIONALITIES | LOWER_STOP | NOT_NAMES_ABROAD
            for w in name.split()
        )
        or not is_proper(name)
        or is_job(name.split()[-1])
        or re.fullmatch(rf"(?i:{WHEN_WORDS})", name.split()[0])
        or name.lower().endswith(ADJECTIVE_ENDINGS)
    ):
        return None
    first = _unglossed(clause[head.end() :].split(",", 1)[0].strip())
    if not head.group(2):
        return (head, [f"my name is {name}"]) if is_job_part(first) else None
    if first and not (
        is_job_part(first)
        or _SELF_VERB.match(first)
        or _SELF_IN.match(first)
        or card_part(first, True)
        or re.match(
            r"(?i:widow|widower|single|married|divorced|retired|from|originally|living|based)\b", first
        )
        or first.split()[0].lower() in NATIONALITIES
    ):
        return None  # "Tom, 12, is my son", "Ana, 34, and Tomás, 36, …"
    return head, [f"my name is {name}", f"I'm {head.group(2)}"]


_KIDS_PART = re.compile(
    r"(?:\d|two|three|four|five)\s+(?i:sons|daughters|boys|girls)(?:\s*+,)?\s+"
    + NAME
    + r"(?:(?:\s*+,)?\s+(?i:and|&)\s+"
    + NAME
    + r")?\s*+$"
)
_BASED_PART = re.compile(PLACE + r"[\s\-]+(?i:based)\s*+[.!]?$")


def card_part(part: str, card: bool) -> str | None:
    """A part of a self-description list that the `_SELF_PART` openings miss: "X originally", a diet, and in a
    card (see `_SELF_HEAD_CARD`) a bare place."""
    if (m := _ORIGIN_PART.match(part)) and origin_word_fact(m):
        return "I'm originally from " + m.group(1)
    if part.lower() in DIETS:
        return "I'm " + part.lower()
    if m := _KIDS_PART.match(part):  # "2 sons Yusuf and Idris"
        return "I have " + m.group(0)
    if (
        (m := _BASED_PART.match(part))
        and is_proper(m.group(1))
        and m.group(1).split()[0].lower() not in NOT_PLACES | LOWER_STOP
    ):
        return "I live in " + m.group(1)  # "Opole based"
    if card and (m := _PLACE_PART.match(part)) and len(part.split()) <= 3 and not is_job(part.split()[-1]):
        words = m.group(1).split()
        if words[0].lower() not in NOT_PLACES | NATIONALITIES | LOWER_STOP | NOT_INTRO and is_proper(
            m.group(1)
        ):
            return "I live in " + m.group(1)
    return None


def _self_list(clause: str, sentence: str = "") -> list[str]:
    if "," not in clause or len(clause) > MAX_CLAUSE:
        return []
    card = False
    if head := _SELF_HEAD.match(clause):
        out = [clause[: head.end() - 1].rstrip()]
    elif (found := _card_head(clause)) and not _CARD_OF_OTHER.search(sentence):
        (head, out), card = found, True
    elif head := _SELF_HEAD_HERE.match(clause):
        first = clause[head.end() :].split(",", 1)[0].strip()
        # 1: "22, I work at a kebab place in Kotka": an adult's age before the user's own work or home.
        own = bool(
            head.group(2) and 13 <= int(head.group(2)) < 100 and re.match(r"I\s+" + _SELF_VERB.pattern, first)
        )
        if head.group(2) and not (
            own
            or is_job_part(first)
            or _SELF_VERB.match(first)
            or re.match(r"(?i:from|living|based)\b", first)
        ):
            return []  # "3, a dog and a cat" is no age
        out = [f"I'm {head.group(2)}" if head.group(2) else clause[: head.end() - 1].rstrip()]
        if own:
            return out
    else:
        return []
    for part in clause[head.end() :].split(",", SELF_LIST_PARTS)[:SELF_LIST_PARTS]:
        part = _unglossed(part.strip())
        if (
            len(words := part.split(maxsplit=2)) == 3
            and words[0].lower() in NATIONALITIES
            and words[1].lower() in ("but", "and")
        ):
            part = words[2]  # "Lebanese but living in Ras Al Khaimah now"
        if (where := _SELF_IN.match(part)) and len(part.split()) <= 5:  # "I'm Mohan, retired, in Mysuru"
            if STAY_WORDS.search(part):
                break  # "…, in Stockholm for a conference"
            if where.group(1).lower() not in NOT_PLACES | LOWER_STOP and not re.fullmatch(
                rf"(?i:{WHEN_WORDS}|{FIELDS})", where.group(1)
            ):
                out.append("I live in " + part[where.start(1) :])
                continue
            break
        if _SELF_VERB.match(part) and len(part.split()) <= 8:
            out.append("I " + part)
            continue
        if said := card_part(part.rstrip(".!"), card):
            out.append(said)
            continue
        if not _SELF_PART.match(part) and is_job_part(part):
            part = ("an " if part[:1].lower() in "aeiou" else "a ") + part
        if not (m := _SELF_PART.match(part)) or len(part.split()) > 8:
            break
        part = part[m.start(1) if m.group(1) else m.start(2) if m.group(2) else m.start(3) :]
        part = ("I'm " if m.group(1) else "I was " if m.group(2) else "I ") + part
        if adverbs := _SUBJECT_ADVERBS.match(part):  # "I'm now living in Leeds"
            part = adverbs.group(1) + part[adverbs.end() :]
        out.append(part)
    return out if len(out) > 1 else []


# "from Kandy, living in Colombo now" (also after "so:" or a dash): the first part is where the user is from.
_FROM_ALONE = re.compile(FILLER + r"(?i:from)\s+" + PLACE + r"\s*")
_MARK = re.compile(r"[—–:]")
_LIVING_IN = re.compile(
    r"(?:(?i:now|currently|still)\s+)?(?i:living|based|residing|live)\s+(?i:in)\s+" + UPPER
)
# "currently with Scania, …", "now at Bolt": after "currently / now" the user's "I'm" is left out.
_NOW_WITH = re.compile(r"(?i:with|at)\s+(?=" + UPPER + r")")
_NOW_BEFORE = re.compile(r"(?i:currently|now|these\s+days|nowadays)\W*$")


def _first_said(parts: list[str]) -> str:
    """The first part that is more than a greeting or filler ("namaste, | I'm Mohan, | retired")."""
    for part in parts[:3]:
        part = part.strip()
        if part and _FILLER.match(part + " ").end() <= len(part):
            return part
    return ""


def _after_mark(part: str) -> str:
    """What follows the last dash or colon of a part ("… daba — so: from Sfax" -> "from Sfax")."""
    return _MARK.split(part)[-1].strip() if len(part) <= MAX_CLAUSE else ""


def clauses(text: str) -> list[tuple[str, bool]]:
    """Split into clauses; each comes with whether it can be a statement: not in a question,
    and not after a frame ("Pretend I am a pirate and I love gold")."""
    text = normalize(text)
    out = []
    for sentence in SENTENCE.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        label = ":" in sentence and next(
            (m for pos in [0, *rule_openings(sentence)] if (m := _LABEL.match(sentence, pos))), None
        )
        if label and not FRAMES.search(label.group(0)):
            sentence = sentence[label.end() :]  # "Just to update my details: I left Lufthansa…"
        question = sentence.endswith("?")
        if (
            question
            and (then := _THEN_QUESTION.search(sentence))
            and not _QUESTION_START.match(sentence)
            and not HEDGES.search(sentence, 0, then.start())
            and not FRAMES.search(sentence, 0, then.start())
        ):
            out.append((sentence[then.end() :], True))  # the question itself, read by no rule
            sentence, question = sentence[: then.start()], False
        parts = [p for part in _CLAUSE.split(sentence) for p in _run_on(part)]
        framed = "," in sentence and bool(
            _SAYS_AFTER.search(sentence)
        )  # "I'm 5, my daughter says": her words, not the user's
        if (
            len(parts) > 1
            and _LIVING_IN.match(parts[1].strip())
            and (origin := _FROM_ALONE.fullmatch(_after_mark(parts[0])))
            and origin_word_fact(origin)
        ):
            parts[0] = "I'm from " + origin.group(1)  # "from Kandy, living in Colombo now"
        for i, clause in enumerate(parts):
            clause = clause.strip()
            if not clause:
                continue
            # "Ana and I got married": a compound subject, not two clauses.
            if (
                i + 1 < len(parts)
                and _MARRIED.match(parts[i + 1].strip())
                and LONE_NAME.fullmatch(clause)
                and is_proper(clause)
            ):
                parts[i + 1] = f"{clause} and {parts[i + 1].strip()}"
                continue
            if i and parts[i - 1].strip().lower() in ("me", "myself") and (joint := _JOINT.match(clause)):
                out.append(
                    ("we " + clause[joint.end() :], question or framed)
                )  # and the clause itself, below
            if i and (plural := _I_PLURAL.match(clause)):
                clause = "we " + clause[plural.end() :]
            if i and _IMPLIED_I.match(clause):
                clause = (
                    "I'm " if clause.startswith("married to ") else "I "
                ) + clause  # "…, married to Espen"
                if adverbs := _SUBJECT_ADVERBS.match(clause):
                    clause = adverbs.group(1) + clause[adverbs.end() :]
            elif i and _IMPLIED_IM.match(clause) and _FIRST_PERSON_START.match(_first_said(parts)):
                clause = "I'm " + clause
                if adverbs := _SUBJECT_ADVERBS.match(clause):  # "…, now living in Leeds"
                    clause = adverbs.group(1) + clause[adverbs.end() :]
            elif i and _IMPLIED_HAVE.match(clause):
                clause = "I have " + clause
            else:
                head = _FILLER.match(clause).end()
                if head and _NOW_WITH.match(clause, head) and _NOW_BEFORE.search(clause, 0, head):
                    clause = clause[:head] + "I'm " + clause[head:]  # "currently with Scania, at the … plant"
                if adverbs := _SUBJECT_ADVERBS.match(clause, head):
                    clause = clause[:head] + adverbs.group(1) + clause[adverbs.end() :]
                if how := _WORK_HOW.match(clause, head):
                    clause = clause[:head] + how.group(1) + " " + clause[how.end() :]
                if dropped := _DROPPED_ANY.match(clause, head):  # the first of _DROPPED_SUBJECT that matches
                    clause = clause[:head] + _DROPPED_SUBJECT[int(dropped.lastgroup[1:])][1] + clause[head:]
                    if adverbs := _SUBJECT_ADVERBS.match(clause, head):  # "Still live in…" is "I live in…"
                        clause = clause[:head] + adverbs.group(1) + clause[adverbs.end() :]
            if clause:
                out.append((clause, question or framed))
                out.extend((extra, question or framed) for extra in _self_list(clause, sentence))
                framed = framed or bool(FRAMES.search(clause))
    return out
