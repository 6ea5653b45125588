"""Rules that extract the user's name: introductions, "call me", name fields, and the same in the languages
users code-switch into.

One module because the package keeps one module per slot: every name rule shares the same
not-a-name guards. Most of its length is rule tables, not logic.
"""

from __future__ import annotations

import re

from .fragments import (
    ADJECTIVE_ENDINGS,
    DIET_WORDS,
    HONORIFIC,
    NAME,
    NAME_T,
    PLACE,
    UPPER,
    WHEN_WORDS,
    WORD_CHARS,
)
from .lexicons import (
    LOWER_STOP,
    NATIONALITIES,
    NOT_INTRO,
    NOT_LOWER_NAMES,
    NOT_NAMES,
    NOT_NAMES_AFTER_COPULA,
    NOT_PLACE_WORDS,
    NOT_PLACES,
    REACTION_WORDS,
    is_job,
)
from .rule import Groups, Rule
from .values import clean_place, is_proper, job_fact, name_fact, someone_else_before


def _intro_name(m):
    """A bare "I'm X." must not look like an adjective; "I'm X, nice to meet you" may."""
    name = m.group(1)
    lowered = name.lower()
    if lowered in NOT_INTRO or lowered in NOT_NAMES or lowered in NATIONALITIES or not is_proper(name):
        return None
    if not m.group(2) and lowered.endswith(ADJECTIVE_ENDINGS):
        return None
    return "name", f"User's name is {name}"


def _intro_card(m):
    """ "I'm Ayo, 31, living in Lagos" / "…, from Lagos": name, age and a place."""
    lowered = m.group(1).lower()
    if lowered in NOT_INTRO or lowered in NOT_NAMES or lowered in NATIONALITIES or not is_proper(m.group(1)):
        return None
    place = clean_place(m.group(4))
    where = (
        ("origin", f"User is from {place}")
        if m.group(3).lower() == "from"
        else ("location", f"User lives in {place}")
    )
    return [("name", f"User's name is {m.group(1)}"), ("age", f"User is {m.group(2)} years old"), where]


def _intro_age(m):
    """ "I'm Ayo, 31": a name and an age."""
    lowered = m.group(1).lower()
    if lowered in NOT_INTRO or lowered in NOT_NAMES or lowered in NATIONALITIES or not is_proper(m.group(1)):
        return None
    return [("name", f"User's name is {m.group(1)}"), ("age", f"User is {m.group(2)} years old")]


def _intro_job(m):
    """ "I'm Dušan, a carpenter from Novi Sad": a name, a job, and where the user is from."""
    lowered = m.group(1).lower()
    job = job_fact(Groups(m.group(2)))
    if (
        not job
        or lowered in NOT_INTRO
        or lowered in NOT_NAMES
        or lowered in NATIONALITIES
        or not is_proper(m.group(1))
    ):
        return None
    found = [("name", f"User's name is {m.group(1)}"), job]
    if m.group(3):
        found.append(("origin", f"User is from {clean_place(m.group(3))}"))
    return found


def _name_from(m):
    """ "I'm Kwabena, from Kumasi": a name and where the user is from."""
    lowered = m.group(1).lower()
    if lowered in NOT_INTRO or lowered in NOT_NAMES or lowered in NATIONALITIES or not is_proper(m.group(1)):
        return None
    return [("name", f"User's name is {m.group(1)}"), ("origin", f"User is from {clean_place(m.group(2))}")]


def _lower_name(m):
    name = m.group(1)
    if name in NOT_LOWER_NAMES or name in NOT_NAMES or name in REACTION_WORDS:
        return None
    return "name", f"User's name is {name.capitalize()}"


def _intro_comma(m):
    """ "I'm Siosaia, first time here": one capitalised word before a comma that is no adjective,
    nationality, job or common word."""
    name = m.group(1)
    lowered = name.lower()
    if (
        lowered in NOT_INTRO
        or lowered in NOT_NAMES
        or lowered in NATIONALITIES
        or lowered in LOWER_STOP
        or lowered.endswith(ADJECTIVE_ENDINGS)
        or is_job(lowered)
        or not is_proper(name)
        or re.fullmatch(WHEN_WORDS, lowered)
    ):
        return None
    return "name", f"User's name is {name}"


def _name_from_place(m):
    """ "I'm Ngozi from Enugu": a name and where the user is from (not "from Customer Services")."""
    name = _intro_comma(m)
    place = clean_place(m.group(2))
    if not name:
        return None
    if any(w.lower() in NOT_PLACE_WORDS for w in place.split()) or place.split()[0].lower() in NOT_PLACES:
        return name
    return [name, ("origin", f"User is from {place}")]


# Introductions in other languages ("me llamo", "je m'appelle"), and "but call me …" after one.
_FOREIGN_NAME = (
    r"(?i:me\s+llamo|mi\s+nombre\s+es|je\s+m'appelle|je\s+suis|ich\s+heiße|ich\s+heisse|mein\s+name\s+ist|"
    r"meu\s+nome\s+é|mi\s+chiamo|watashi\s+wa|boku\s+wa|ik\s+heet|mam\s+na\s+imię|jag\s+heter|mitt\s+namn\s+är)"
)
_FOREIGN_CALL = (
    r"(?i:pero|mais|aber|ma|mas|but)\s+(?i:dime|llámame|llamame|appelle-moi|nenn\s+mich|"
    r"chiamami|me\s+chame\s+de|call\s+me)"
)


def _names_like(first: str, second: str) -> bool:
    """ "it's Ilse, not Else", "Radka not Radek": a spelling put right, not two different things."""
    import difflib

    return (
        first.lower() != second.lower()
        and difflib.SequenceMatcher(None, first.lower(), second.lower()).ratio() >= 0.6
    )


def _respelt(m):
    if not _names_like(m.group(1), m.group(2)) or m.group(1).lower() in NOT_INTRO | NATIONALITIES:
        return None
    return name_fact(m)


def _name_goes_by(m):
    return (
        is_proper(m.group(1))
        and is_proper(m.group(2))
        and ("name", f"User's name is {m.group(1)}, who goes by {m.group(2)}")
    )


def _two_word_intro(m):
    words = m.group(1).split()
    if any(
        w.lower() in NOT_INTRO | NOT_NAMES | NATIONALITIES | LOWER_STOP or is_job(w) for w in words
    ) or not is_proper(m.group(1)):
        return None
    if re.fullmatch(rf"(?i:{WHEN_WORDS})", words[0]) or words[-1].lower().endswith(
        ("ish", "ese", "ian", "ean")
    ):
        return None
    return "name", f"User's name is {m.group(1)}"


# Self-introductions, homes, origins and ages in the languages users code-switch into, cue first.
_FOREIGN_NAME_CUES = (
    r"(?i:tôi\s+là|tôi\s+tên\s+là|tên\s+tôi\s+là|mình\s+tên\s+là|mình\s+tên|em\s+tên\s+là|jina\s+langu\s+ni|"
    r"naitwa|ninaitwa|nazywam\s+się|nazywam\s+sie|ég\s+heiti|eg\s+heiti|ako\s+si|ang\s+pangalan\s+ko\s+ay|"
    r"benim\s+adım|benim\s+adim|adım|ismim|me\s+lene|to\s+onoma\s+mou\s+einai|fy\s+enw\s+i\s+yw|fy\s+enw\s+yw|"
    r"jeg\s+heter|jeg\s+hedder|mitt\s+navn\s+er|mit\s+navn\s+er|nimeni\s+on|a\s+nevem|jmenuji\s+se|jmenuju\s+se|"
    r"volám\s+sa|menya\s+zovut|mă\s+numesc|ma\s+numesc|numele\s+meu\s+este|me\s+chamo|eu\s+me\s+chamo|"
    r"il\s+mio\s+nome\s+è|mijn\s+naam\s+is|nama\s+saya|mera\s+naam|ismi|je\s+ireumeun|jeoneun|jeo-neun)"
)
# A word after a name that says "here" or "it's me" in another language ("Wambui hapa", "Rhodri dw i").
_HERE_WORDS = r"(?i:hapa|tutaj|burada|yma|dw\s+i|ydw\s+i|dwi|đây|aquí|aqui|anseo|desu|dayo)"
# More of the languages users code-switch into (Dutch, Irish, Finnish, Portuguese, romanised Japanese and
# Arabic, Hinglish, Yoruba and Nigerian Pidgin), by language, not by line.
_NAME_IS_PHRASES = (
    r"(?i:is\s+mise|ako\s+po\s+si|my\s+name\s+na|ana\s+ismi|watashi\s+no\s+namae\s+wa|"
    r"minun\s+nimeni\s+on|az\s+én\s+nevem)"
)
# Cues that also open other statements ("ik ben 62", "olen Helsingissä", "sou de Recife"): the name must look
# like one.
_I_AM_CUES = r"(?i:ik\s+ben|olen|eu\s+sou\s+[oa]|sou\s+[oa]|mimi\s+ni|soy|sono|je\s+suis|sunt)"
_FINNISH_CASES = ("ssa", "ssä", "sta", "stä", "lla", "llä", "lta", "ltä", "ksi", "lle")


def _foreign_intro(m):
    name = m.group(1)
    if name.lower() in NATIONALITIES | NOT_INTRO | NOT_NAMES_AFTER_COPULA or name.lower().endswith(
        _FINNISH_CASES + ADJECTIVE_ENDINGS + ("lainen", "läinen")
    ):
        return None
    return name_fact(m)


_I_AM_COPULAS = (
    r"(?:(?i:jestem|jsem|ja\s+sam|jaz\s+sem|jas\s+sum|unë\s+jam|une\s+jam|es\s+esmu|aš\s+esu|as\s+esu|ma\s+olen|"
    r"jeg\s+er|jag\s+är|jag\s+ar|eg\s+er|(?:ich|i)\s+bin\s+(?:die|der|d')|ani|saya|aku|ek\s+is|mwen\s+se|mi\s+estas|"
    r"sóc|soc|ako\s+ay|ako\s+si)|ben)"
)
_NAME_IS_CUES = (
    r"(?i:shmi|kor'?im\s+li|esmam|esme\s+man|amar\s+naam|amar\s+nam|mero\s+naam|en\s+peyar|naa\s+peru|maza\s+nav|"
    r"majha\s+nav|chan\s+chue|phom\s+chue|wo\s+jiao|wǒ\s+jiào|wo\s+de\s+mingzi\s+shi|ngo\s+giu|mia\s+nomo\s+estas|"
    r"em\s+dic|chámome|chamome|nire\s+izena|minu\s+nimi\s+on|mu\s+nimi\s+on|mani\s+sauc|mans\s+vārds\s+ir|"
    r"mano\s+vardas|ime\s+mi\s+je|(?:ja\s+se\s+)?zovem\s+se|moje\s+ime\s+je|kazvam\s+se|se\s+vikam|mene\s+zvaty|"
    r"mene\s+zvut|(?:unë\s+)?quhem|emri\s+im\s+(?:është|eshte)|mənim\s+adım|menim\s+adim|mening\s+ismim|"
    r"mwen\s+rele|m\s+rele|non\s+mwen\s+se|my\s+naam\s+is|ech\s+heeschen|jisimni|sunana|aha\s+m\s+(?:bụ|bu)|"
    r"magacaygu\s+waa|magacaygu|igama\s+lami\s+ngu-?|igama\s+lam\s+ngu-?|nem\s+bilong\s+mi|eg\s+eiti|"
    r"mi\s+nombre\s+es|je\s+m'appelle|je\s+mappelle|mein\s+name\s+ist|ich\s+heiße|ich\s+heisse|i\s+hoaß|i\s+hoass|"
    r"heiße|heisse|me\s+llamo|mi\s+chiamo|me\s+chamo|ik\s+heet|jag\s+heter|jeg\s+heter|jeg\s+hedder|eg\s+heiter)"
)
_CALL_ME_CUES = (
    r"(?i:(?:bitte\s+)?(?:nenn|nennt|nennen\s+Sie)\s+mich(?:\s+(?:einfach|gern|gerne|ruhig|bitte))?|chiamami(?:\s+pure)?|"
    r"appelle[\s\-]moi|appelez[\s\-]moi|ll[aá]mame|dime|me\s+chame\s+de|me\s+chamem\s+de|noem\s+me(?:\s+maar)?|"
    r"zeg\s+maar|kald\s+mig|kall\s+meg|kalla\s+mig|mów\s+mi|mow\s+mi|zovi\s+me|říkej\s+mi|rikej\s+mi|"
    r"hívj(?:atok)?|tawagin\s+mo\s+akong|niite|niiteni)"
)


def _cued_name(m):
    name = m.group(1)
    lowered = name.lower()
    if (
        lowered in NATIONALITIES | NOT_INTRO | NOT_NAMES_AFTER_COPULA
        or lowered.endswith(_FINNISH_CASES + ADJECTIVE_ENDINGS)
        or someone_else_before(m)
        or DIET_WORDS.match(lowered)
    ):
        return None
    if m.group(0)[:3].lower() in ("ich", "i b") and lowered.endswith(
        (
            "er",
            "erin",
            "in",
            "ist",
            "istin",
            "eur",
            "ant",
            "ent",
            "or",
            "arzt",
            "ärztin",
            "schwester",
            "mann",
            "frau",
            "ling",
        )
    ):
        return None  # "ich bin der Bäcker": a German noun, not a name
    return name_fact(m)


# "my name is Grzegorz but everyone calls me Greg": both, the name and the one the user goes by.
# 1: "…, actually everyone calls me Levi, use that" too: the name the user goes by is the one to use.
NAME_AND_WHAT_EVERYONE_CALLS_ME = Rule(
    r"(?i:my\s+name\s+is|my\s+name's)\s+"
    + NAME
    + r",?\s+(?:(?i:but|actually|though|tho|and)\s+)?(?i:everyone|everybody|people|most\s+people|"
    r"my\s+friends|friends|they)\s+(?i:just\s+|all\s+)?(?i:calls?|know)\s+me\s+(?i:as\s+)?"
    + NAME
    + r"(?=$|[\s,.!;])",
    lambda m: (
        is_proper(m.group(1))
        and is_proper(m.group(2))
        and ("name", f"User's name is {m.group(1)}, who goes by {m.group(2)}")
    ),
    0.9,
    slot="name",
    alone=True,
)
NAME_STATED = Rule(
    r"(?i:my\s+name\s+is|my\s+name's|(?:my\s+)?names|(?:the\s+)?name's|(?:the\s+)?name\s+is|"
    r"(?:(?:just|please|only|simply|you\s+can|can\s+you|could\s+you|feel\s+free\s+to)\s+){0,2}call\s+me|I'm\s+called|I\s+am\s+called|"
    r"(?:people|everyone|everybody|friends|my\s+friends|most\s+people|folks|they)\s+(?:all\s+)?call\s+me|"
    r"(?:everyone|everybody|my\s+friends?|people)\s+calls\s+me|I\s+go\s+by|my\s+first\s+name\s+is|"
    r"(?:please\s+)?address\s+me\s+as|I'm\s+known\s+as|I\s+am\s+known\s+as|"
    r"(?:my\s+friends|everyone|people|most\s+people)\s+know\s+me\s+as|"
    r"I\s+prefer\s+(?:to\s+be\s+called|being\s+called|to\s+go\s+by)|I'd\s+(?:rather|prefer\s+to|like\s+to)\s+be\s+called)\s+"
    + NAME_T
    + r"\s*(?:$|[,.!;]|\s+and\b|\s+but\b|\s+here\b|\s+(?i:not|with\s+an?)\s+(?="
    + UPPER
    + r")|\s+(?i:at\s+work|from\s+now\s+on|please|pls|plz|thanks|instead|for\s+short|now|"
    r"these\s+days|nowadays|sorry|thank\s+you|nice\s+to\s+meet)\b)",
    name_fact,
    0.95,
    slot="name",
    alone=True,
)
NAME_NOT_THE_OTHER = Rule(
    r"(?i:it's|it\s+is)\s+"
    + NAME
    + r",?\s+(?i:not)\s+"
    + rf"{UPPER}{WORD_CHARS}{{1,30}}"
    + r"\s*(?:$|[.!,;]|\s[-–—])",
    name_fact,
    0.85,
    needs=r"(?i)\bmy\s+name\b",
    slot="name",
    alone=True,
)
NAME_SPELLED_OUT = Rule(
    r"(?i:it's|it\s+is)\s+(?i:spelled|spelt|written)\s+" + NAME + r"\s*[.!]?$",
    name_fact,
    0.8,
    needs=r"(?i)\bmy\s+name\b",
    slot="name",
    alone=True,
)
# "This is Ingrid from accounting" / "This is Ingrid speaking": a phone or chat introduction.
NAME_PHONE_INTRO = Rule(
    r"(?i:this\s+is)\s+"
    + NAME
    + r"(?:\s+(?i:speaking|calling|here)\b|\s+(?i:from)\s+(?i:the\s+)?(?:"
    + UPPER
    + r"|[a-z]+\s+(?i:team|office|department|desk)\b))",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_WITH_HONORIFIC = Rule(
    r"(?i:this\s+is)\s+" + HONORIFIC + r"\s+" + NAME + r"(?=$|[\s,.!;])",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_FORM_FIELD = Rule(
    r"(?i:(?:first|given|full|preferred)\s+)?(?i:name)\s*:\s*" + NAME + r"\s*(?:$|[,.!;/|])",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
LOWER_NAME = Rule(
    r"(?i:my\s+name\s+is|my\s+name's|the\s+name's)\s+([a-z][a-z'\-]{1,30})\s*(?:[.!]?$|,\s+(?:and|I)\b)",
    _lower_name,
    0.8,
    slot="name",
    alone=True,
)
NAME_AFTER_DENIAL = Rule(
    r"(?i:my\s+name(?:'s|\s+is)?\s+(?:not|isn't))\s+"
    + rf"{UPPER}{WORD_CHARS}{{1,30}}"
    + r",?\s+(?i:it's|it\s+is|but)\s+"
    + NAME
    + r"\s*(?:$|[.!;,])",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
# "My name's not Tom. It's Tomasz": the sentence after the denial.
NAME_SENTENCE_AFTER_DENIAL = Rule(
    r"(?i:it's|it\s+is)\s+" + NAME + r"\s*(?:$|[.!;,])",
    name_fact,
    0.85,
    needs=r"(?i)\bmy\s+name(?:'s|\s+is)?\s+(?:not|isn't)\b",
    slot="name",
    alone=True,
)
# "Hey, Dmitri speaking." / "Dmitri here, quick question": a greeting or the whole sentence.
NAME_SPEAKING_OR_HERE = Rule(
    r"(?:(?i:hi|hello|hey)[,!]?\s+)?"
    + NAME_T
    + r"\s+(?i:speaking|here|po|hapa|tutaj|burada)(?:\s+(?i:again))?\s*(?:$|[,.!]|\s[-–—]\s|\s+(?i:with|from)"
    r"\b)",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_AFTER_GREETING = Rule(
    r"(?i:hi|hello|hey)[,!]?\s+(?:there[,!]?\s+)?(?i:I'm|I\s+am)\s+" + NAME + r"\s*(?:$|[,.!]|\s+and\b)",
    name_fact,
    0.9,
    slot="name",
    alone=True,
)
NAME_FROM = Rule(
    r"(?i:I'm|I\s+am)\s+"
    + rf"({UPPER}{WORD_CHARS}{{1,30}})"
    + r"(?:\s+(?i:btw|by\s+the\s+way))?,\s+(?:(?i:originally)\s+)?"
    r"(?i:from)\s+" + PLACE + r"(?=$|[\s,.!;])",
    _name_from,
    0.85,
    slot="name",
    alone=True,
)
INTRO_CARD = Rule(
    r"(?i:I'm|I\s+am)\s+"
    + rf"({UPPER}{WORD_CHARS}{{1,30}})"
    + r",\s+(\d{1,3}),\s+((?i:(?:living|based)\s+in|from))\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _intro_card,
    0.85,
    slot="name",
    alone=True,
)
INTRO_AGE = Rule(
    r"(?i:I'm|I\s+am)\s+" + rf"({UPPER}{WORD_CHARS}{{1,30}})" + r",\s+(\d{1,3})\s*(?:$|[,.!;])",
    _intro_age,
    0.85,
    slot="name",
    alone=True,
)
INTRO_JOB = Rule(
    r"(?i:I'm|I\s+am)\s+"
    + rf"({UPPER}{WORD_CHARS}{{1,30}})"
    + r",\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,2}[a-z\-]+)"
    r"(?:\s+(?i:from)\s+" + PLACE + r")?(?=\s*(?:$|[,.!;]))",
    _intro_job,
    0.85,
    slot="name",
    alone=True,
)
# "I'm Renée." / "I'm Renée, nice to meet you": one capitalised word that is no adjective.
INTRO_NAME = Rule(
    r"(?i:I'm|I\s+am)\s+"
    + rf"({UPPER}{WORD_CHARS}{{1,30}})"
    + r"(?:\s*[.!]?$|\s*[.!]\s|(,\s+(?i:nice|pleased|good|glad|by\s+the\s+way|btw|here|an?\s|from\s|\d{1,"
    r"3}\b)|\s+(?i:btw|by\s+the\s+way)\b))",
    _intro_name,
    0.85,
    slot="name",
    alone=True,
)
INTRO_NAME_THEN_CLAUSE = Rule(
    r"(?i:I'm|I\s+am)\s+(" + UPPER + WORD_CHARS + r"{1,30}),\s+(?=[^\W\d_])",
    _intro_comma,
    0.75,
    slot="name",
    alone=True,
)
NAME_FOLLOWING_UP = Rule(
    r"(?i:this\s+is)\s+"
    + NAME
    + r"(?:,\s*|\s+)(?=(?i:following\s+up|writing|checking\s+in|reaching\s+out|calling|contacting|"
    r"getting\s+back|messaging|emailing|texting|again|back\s+again|here\s+again)\b)",
    _intro_comma,
    0.8,
    slot="name",
    alone=True,
)
NAME_GREETING_INTRO = Rule(
    r"(?i:hi|hello|hey|yes|yeah|yep|ok|okay)?[,!]?\s*(?i:this\s+is)\s+("
    + UPPER
    + WORD_CHARS
    + r"{1,30})\s*[.!]?$",
    _intro_comma,
    0.75,
    needs=r"(?i)^\W*(?:hi|hello|hey|yes|yeah|yep|ok|okay)\b[,!]?\s+this\s+is\b",
    slot="name",
    alone=True,
)
NAME_FROM_PLACE = Rule(
    r"(?i:I'm|I\s+am)\s+(" + UPPER + WORD_CHARS + r"{1,30})\s+(?i:from)\s+" + PLACE + r"\s*(?:$|[,.!;])",
    _name_from_place,
    0.75,
    slot="name",
    alone=True,
)
# Names: "Ximena por aquí", "watashi wa Haruto desu", "Mi nombre es Guadalupe pero dime Lupe".
NAME_FOREIGN_AND_GOES_BY = Rule(
    _FOREIGN_NAME + r"\s+" + NAME + r",?\s+" + _FOREIGN_CALL + r"\s+" + NAME + r"(?=$|[\s,.!;])",
    _name_goes_by,
    0.85,
    slot="name",
    alone=True,
)
NAME_FOREIGN_STATED = Rule(
    _FOREIGN_NAME + r"\s+" + NAME + r"(?:\s+(?i:desu|da))?(?=\s*(?:$|[,.!;])|\s+(?i:and|but|y|et|und|e)\b)",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_FOREIGN_HERE = Rule(
    r"(?:(?i:hola|salut|bonjour|ciao|hallo|hi|hey)[,!]*\s+)?"
    + NAME
    + r"\s+(?i:por\s+aquí|por\s+aqui|ici|hier|qui)\b",
    name_fact,
    0.8,
    slot="name",
    alone=True,
)
# "it's Ilse, not Else", "its Radka btw not Radek": a spelling put right (the two names alike).
RESPELT = Rule(
    r"(?i:it's|it\s+is|its)\s+("
    + UPPER
    + WORD_CHARS
    + r"{1,30})(?:,?\s+(?i:btw|by\s+the\s+way))?,?\s+(?i:not)\s+("
    + UPPER
    + WORD_CHARS
    + r"{1,30})(?=$|[\s,.!;])",
    _respelt,
    0.8,
    # "my sister's name keeps being misspelt": hers
    needs=r"(?is)^(?!.*\b(?:his|her|their|[\w\-]+'s)\s+name\b)"
    r".*\b(?:typo|spell|spelt|spelled|spelling|autocorrect|auto-correct|keyboard|misspel\w*|keeps\s+changing|"
    r"keeps\s+writing|keeps\s+putting|keeps\s+calling\s+me)\b",
    slot="name",
    alone=True,
)
# "To whom it may concern: I, Marguerite Okonkwo, request…": a formal self-naming.
NAME_FORMAL = Rule(r"I,\s+" + NAME + r",\s+(?=[a-z])", name_fact, 0.85, slot="name", alone=True)
NAME_REAL_OR_FULL = Rule(
    r"(?i:my\s+(?:real|full|legal|actual|given|birth|proper)\s+name\s+is|my\s+(?:real|full|legal)\s+name's)\s+"
    + NAME_T
    + r"(?=$|[\s,.!;])",
    name_fact,
    0.9,
    slot="name",
    alone=True,
)
# Names: "hey its me Amarachi again", "hello it's Eszter again", "I am writing as Mrs Şebnem Aydın".
NAME_RETURNING = Rule(
    r"(?i:it's|it\s+is|its)\s+(?i:me|just\s+me),?\s+"
    + NAME_T
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:again|here|from|with|about|btw)\b)",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_RETURNING_AFTER_GREETING = Rule(
    r"(?i:hi|hello|hey|hiya|heya|good\s+(?:morning|afternoon|evening))[,!]*\s+(?i:it's|it\s+is|its)\s+"
    + NAME
    + r",?\s+(?i:again|here)\b",
    name_fact,
    0.8,
    slot="name",
    alone=True,
)
NAME_WRITING_AS = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:writing|contacting\s+you|emailing|messaging|reaching\s+out)(?:\s+(?i:to\s+you))?\s+(?i:as)\s+"
    + HONORIFIC
    + r"\.?\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    name_fact,
    0.8,
    slot="name",
    alone=True,
)
# "Ngozi is my name", "born in 1988 in Ibadan", "I manage a small team at Ericsson", "I'm the head baker at
# Crumbs".
NAME_BEFORE_IS_MY_NAME = Rule(
    NAME_T + r"\s+(?i:is\s+my\s+(?:first\s+|given\s+)?name)\s*(?:$|[,.!;])",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
# "I'm Ana Souza, a dentist", "I'm Li Wei, nice to meet you": a two-word name before a self-description.
TWO_WORD_INTRO_BEFORE_DESCRIPTION = Rule(
    r"(?i:I'm|I\s+am)\s+("
    + UPPER
    + WORD_CHARS
    + r"{1,30}\s+"
    + UPPER
    + WORD_CHARS
    + r"{1,30})(?=,\s+(?:(?i:nice|pleased|glad|"
    r"good\s+to|here|from|living|based|originally|an?)\s|\d{1,3}\b)|\s+(?i:and)\s+(?:I|I'm|my)\b)",
    _two_word_intro,
    0.75,
    slot="name",
    alone=True,
)
TWO_WORD_INTRO_AFTER_GREETING = Rule(
    r"(?i:I'm|I\s+am)\s+(" + UPPER + WORD_CHARS + r"{1,30}\s+" + UPPER + WORD_CHARS + r"{1,30})\s*[.!]?$",
    _two_word_intro,
    0.75,
    needs=r"^\W*(?i:hi|hello|hey|hiya|heya|good\s+(?:morning|afternoon|evening))\b",
    slot="name",
    alone=True,
)
NAME_FOREIGN_CUE = Rule(
    _FOREIGN_NAME_CUES
    + r"\s+"
    + NAME
    + r"(?:\s+(?i:imnida|ieyo|iyeyo|yeyo|hai|ni|po))?(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|i|na|y|và|og|ja|und|"
    r"et|e|och|en|ve|kai|aur|dan|ac)\b)",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
NAME_FOREIGN_GREETING_HERE = Rule(
    r"(?:(?i:shwmae|helo|hujambo|habari|jambo|cześć|czesc|dzień\s+dobry|hæ|halló|merhaba|kumusta|xin\s+chào|chào\s+bạn|chào|"
    r"annyeong(?:haseyo)?|yassou|geia\s+sou|hola|hi|hey|hello)[,!]*\s+)?"
    + NAME
    + r",?\s+"
    + _HERE_WORDS
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:and|but|I)\b)",
    name_fact,
    0.8,
    slot="name",
    alone=True,
)
# "Name's Jisoo - not Jiwoo", "my name is Thảo (Thao is fine…)": the name ends at a dash or a bracket too.
NAME_STATED_BEFORE_DASH_OR_BRACKET = Rule(
    r"(?i:my\s+name\s+is|my\s+name's|(?:the\s+)?name's|(?:just\s+|please\s+)?call\s+me|I\s+go\s+by)\s+"
    + NAME_T
    + r"(?=\s*\(|\s+[-–—]+\s|[-–—]{2})",
    name_fact,
    0.9,
    slot="name",
    alone=True,
)
# "It's Tadhg, pronounced like 'tiger'", "It's Małgorzata. Gosia is fine too": a name, in a message about it.
NAME_IN_MESSAGE_ABOUT_IT = Rule(
    r"(?i:it's|it\s+is|its)\s+" + NAME + r"(?=\s*(?:$|[,.!;(]))",
    name_fact,
    0.8,
    needs=r"(?i)\b(?:pronounced|pronounce|pronunciation|spelt|spelled|spelling|is\s+fine\s+too|for\s+short|nickname|"
    r"my\s+friends\s+(?:use|call\s+me))\b",
    slot="name",
    alone=True,
)
NAME_FOREIGN_NAME_IS = Rule(
    _NAME_IS_PHRASES + r"\s+" + NAME + r"(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|e|en|ja|w|i|y)\b)",
    name_fact,
    0.85,
    slot="name",
    alone=True,
)
FOREIGN_INTRO = Rule(
    _I_AM_CUES + r"\s+" + NAME + r"(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|e|en|ja|y)\b)",
    _foreign_intro,
    0.8,
    slot="name",
    alone=True,
)
# "Gbenga ni orukọ mi", "main Devika hoon", "ana Walid, 3omri 31": the name before the cue, or after a
# lower-case pronoun.
NAME_YORUBA_CUE_AFTER = Rule(
    NAME + r"\s+(?i:ni\s+(?:orukọ|oruko|orúkọ)\s+mi)\b", name_fact, 0.85, slot="name", alone=True
)
NAME_HINDI_I_AM = Rule(r"main\s+" + NAME + r"\s+(?i:hoon|hun|hu)\b", name_fact, 0.85, slot="name", alone=True)
NAME_PRONOUN_BEFORE_COMMA = Rule(
    r"(?:main|ana)\s+" + NAME + r",",
    name_fact,
    0.75,
    needs=r"\b(?:saal|hoon|mein|3omri|sakin|ismi|hala2|bashtghil)\b",
    slot="name",
    alone=True,
)
# "Shalom, ani Yael", "Dzień dobry, jestem Bernadeta", "Servus! I bin die Vroni", "Merhaba, ben Ece." (a
# lower-case "ben").
CUED_NAME_I_AM = Rule(
    _I_AM_COPULAS
    + r"\s+"
    + NAME
    + r"(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|og|och|og|i|e|y|und|ve|dan|ja|a|from|z|ze|iz)\b)",
    _cued_name,
    0.8,
    slot="name",
    alone=True,
)
CUED_NAME_NAME_IS = Rule(
    _NAME_IS_CUES
    + r"\s*+"
    + NAME
    + r"(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|og|och|i|e|y|und|ve|dan|ja|a|da|ho|hai|new|ast|dhe|és|es|"
    r"un|ir|in|eta|u|et|en|at|và|na|iyo|no|kaj|ac|agus)\b)",
    _cued_name,
    0.85,
    slot="name",
    alone=True,
)
CUED_NAME_CALL_ME = Rule(
    _CALL_ME_CUES
    + r"\s+"
    + NAME
    + r"(?=\s*(?:$|[,.!;(])|\s+(?i:and|but|og|och|i|e|y|und|ve|dan|ja|bitte|please|por\s+favor|"
    r"per\s+favore|s'il|de|desu)\b)",
    _cued_name,
    0.85,
    slot="name",
    alone=True,
)
CUED_NAME_TURKISH_CALL_ME = Rule(
    r"(?i:bana)\s+" + NAME + r"\s+(?i:de|diyebilirsin|diyebilirsiniz|deyin)\b",
    _cued_name,
    0.85,
    slot="name",
    alone=True,
)
CUED_NAME_COPULA_AFTER = Rule(
    NAME + r"\s+(?i:vagyok|naiz|naiz\s+eta)(?=$|[\s,.!;])", _cued_name, 0.8, slot="name", alone=True
)
# "it's Oren, the one who asked about sourdough": the user, reminding who they are.
NAME_REMINDING_WHO = Rule(
    r"(?i:it's|it\s+is|its)\s+"
    + NAME
    + r",?\s+(?i:the\s+(?:one|guy|girl|person|lady|woman|man|customer|client)\s+(?:who|that|from|with))\b",
    name_fact,
    0.8,
    slot="name",
    alone=True,
)
