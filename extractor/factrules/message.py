"""What a whole message says or takes back: a sign-off or email signature that names its writer, a profile
line of fields between bars, a forwarded message (someone else's words), a message that opens with a laugh or
ends in "jk".
"""

from __future__ import annotations

import re

from .clauses import LONE_NAME, card_part
from .fragments import DETERMINERS, DIETS, HONORIFIC, NAME_T, ORG, OTHER_HEAD, PLACE, UPPER
from .lexicons import (
    LOWER_STOP,
    NATIONALITIES,
    NOT_INTRO,
    NOT_NAMES,
    NOT_ORGS,
    NOT_PLACE_WORDS,
    is_job_phrase,
)
from .rule import Groups
from .values import clean_place, is_job_part, is_proper, job_fact

# A formal closing at the end of a message names its writer ("Kind regards, Mirela Popescu",
# "Best,\nTadeusz"); not "Thanks, Tom", which may thank someone else.
SIGN_OFF = re.compile(
    r"(?:^|[.!\n]\s*)(?i:kind\s+regards|best\s+regards|warm\s+regards|warmest\s+regards|regards|best\s+wishes|"
    r"sincerely|yours\s+sincerely|yours\s+faithfully|yours\s+truly|respectfully|cheers|best|all\s+the\s+best|"
    r"saludos|cordialement|grüße|viele\s+grüße|mit\s+freundlichen\s+grüßen|abraços)"
    r"[,!.:\-–—]*\s+" + NAME_T + r"\s*[.!]?\s*$"
)
# An email signature or profile header, as fields on lines or between bars ("Dr. Aurelio Santangelo |
# Cardiologist | Ospedale San Raffaele, Milano", "Best,\nAna Souza\nSenior Data Analyst\nNubank, São Paulo"):
# a name alone on the first field (or after a sign-off), then a job alone, then the organisation and its city.
# Not in a forwarded or quoted message, and only in a short one (fields are read from the last 400
# characters).
_SIG_FIELDS = re.compile(r"[ \t]*+(?:\n|\|(?!\|)|·|•)[ \t]*+")
_SIG_NAME = re.compile(
    r"(?:"
    + HONORIFIC
    + r"\.?\s+)?("
    + UPPER
    + r"[^\W\d_'\-]*+(?:[\-'][^\W\d_]++)?(?:\s+"
    + UPPER
    + r"[^\W\d_'\-]*+(?:[\-'][^\W\d_]++)?){1,2})(?:,?\s+(?:PhD|MD|MBA|MSc|BSc|RN|CPA|Jr\.?|Sr\.?))?"
)
_SIG_ORG_CITY = re.compile(ORG + r",\s*+" + PLACE + r"$")
_SIG_NOT = re.compile(r"(?i)\b(?:forwarded|fwd|wrote:|from:|sent:|to:|subject:|on\s+behalf|quote|unquote)")
_SIG_LEAD = re.compile(
    r"(?i)(?:senior|junior|lead|chief|principal|head|staff|associate|assistant|deputy|acting)\s+"
)


def signature_facts(text: str) -> list[tuple[str, str]]:
    if len(text) > 600 or "\n" not in text and "|" not in text and "·" not in text or _SIG_NOT.search(text):
        return []
    fields = [f.strip(" ,.-–—") for f in _SIG_FIELDS.split(text[-400:].strip())]
    fields = [f for f in fields if f]
    start = 0
    for i, f in enumerate(fields[:-1]):
        if _SIGN_OFF_WORD.fullmatch(f):
            start = i + 1  # "Best,\nAna Souza\n…"
    fields = fields[start:]
    if (
        not 2 <= len(fields) <= 5
        or not (name := _SIG_NAME.fullmatch(fields[0]))
        or (start == 0 and len(fields) < 3)
    ):
        return []
    if any(
        w.lower() in NOT_INTRO | NOT_NAMES | NATIONALITIES | LOWER_STOP | NOT_PLACE_WORDS
        for w in name.group(1).split()
    ):
        return []
    found = [("name", f"User's name is {name.group(1)}")]
    role = re.split(r"\s+(?:at|@)\s+|,\s*+", fields[1], maxsplit=1)
    words = _SIG_LEAD.sub("", role[0]).lower().split()
    if not (1 <= len(words) <= 4 and is_job_phrase(words)):
        return found if start else []
    found.append(("job", f"User works as {'an' if role[0][0].lower() in 'aeiou' else 'a'} {role[0]}"))
    org = role[1].strip() if len(role) > 1 else (fields[2] if len(fields) > 2 else "")
    if (where := _SIG_ORG_CITY.fullmatch(org)) and where.group(2).lower() not in NOT_PLACE_WORDS:
        found += [
            ("employer", f"User works at {where.group(1)}"),
            ("location", f"User lives in {clean_place(where.group(2))}"),
        ]
    elif org and re.fullmatch(ORG, org) and org.split()[0].lower() not in DETERMINERS | NOT_ORGS:
        found.append(("employer", f"User works at {org}"))
    return found


# A profile line of fields between bars or bullets with an age among them ("29F | nurse | Cork | dog mum to
# Biscuit", "Marco • 34 • sommelier • Verona"): the age, a job, a place, a diet, and a name as its first
# field.
_BIO_LABEL = re.compile(r"(?i:bio|about\s+me|profile|me|intro)\s*+:\s*+")
_BAR_FIELDS = re.compile(r"\s++[|•·/]\s*+|\s*+[|•·]\s++")
_BAR_AGE = re.compile(r"(\d{2})\s*+(?:[FMfm]|(?i:yo|y/o|yrs?|years?(?:\s+old)?|nb))?")


def bar_card_facts(text: str) -> list[tuple[str, str]]:
    if len(text) > 300 or "\n" in text.strip():
        return []
    text = _BIO_LABEL.sub("", text.strip(), count=1)
    fields = [f.strip(" .!") for f in _BAR_FIELDS.split(text)]
    if len(fields) < 3:  # "Bio: 34. Architect. Lisbon. Pescatarian.": short sentences as fields
        fields = [f.strip(" .!") for f in re.split(r"[.!]\s++", text)]
        if any(len(f.split()) > 4 for f in fields):
            return []
    if any(OTHER_HEAD.search(f) for f in fields):
        return []  # "Ahmed | 45 | my dad | Cairo" is someone else's card
    ages = [m.group(1) for f in fields if (m := _BAR_AGE.fullmatch(f)) and 13 <= int(m.group(1)) < 100]
    if not 3 <= len(fields) <= 8 or len(ages) != 1:
        return []
    found = [("age", f"User is {ages[0]} years old")]
    for i, f in enumerate(fields):
        words = f.split()
        if not words or _BAR_AGE.fullmatch(f):
            continue
        if is_job_part(f) and (job := job_fact(Groups(f))):
            found.append(job)
        elif (
            i == 0
            and LONE_NAME.fullmatch(f)
            and is_proper(f)
            and not any(
                w.lower() in NOT_INTRO | NOT_NAMES | NATIONALITIES | LOWER_STOP | NOT_PLACE_WORDS
                for w in words
            )
        ):
            found.append(("name", f"User's name is {f}"))
        elif i and (said := card_part(f, True)):
            where = said.split(" ", 3)[-1]
            found.append(
                ("location", f"User lives in {where}")
                if said.startswith("I live")
                else ("origin", f"User is from {where}")
                if said.startswith("I'm originally")
                else ("diet", f"User is {f.lower()}")
                if f.lower() in DIETS
                else None
            )
    return [f for f in found if f]


_SIGN_OFF_WORD = re.compile(
    r"(?i:kind\s+regards|best\s+regards|warm\s+regards|warmest\s+regards|regards|best\s+wishes|sincerely|"
    r"yours\s+sincerely|yours\s+faithfully|yours\s+truly|respectfully|cheers|best|all\s+the\s+best|thanks|"
    r"many\s+thanks|thank\s+you|saludos|cordialement|grüße|viele\s+grüße|mit\s+freundlichen\s+grüßen|abraços|"
    r"--|—|-- ?)[,!.]*"
)
FORWARDED = re.compile(
    r"(?i)-{2,}+\s*+(?:forwarded|original)\s+message|begin\s+forwarded\s+message|^\s*+(?:fwd?|fw)\s*+:|"
    r"(?:^|\n)\s*+from:[^\n]{1,200}+\n\s*+(?:sent|to|date|subject):"
)
NOT_JOKING = re.compile(r"(?i:\bnot|\bno|n't)\s*+$")  # "I live in Oslo, I'm not kidding" is no joke
# A message that opens with a laugh is a joke or a reaction ("lol my name is Groot", "haha my husband thinks
# he's a chef"): no labelled set has a fact in one.
LAUGH_START = re.compile(
    r"[\W_]*+(?i:lol|lmao+|lmfao|rofl|ha(?:ha)++h*|he(?:he)++|jaja(?:ja)*+|kkk+)(?![\w'])"
)
JOKE_END = re.compile(r"(?i:\b(?:jk|j/k|jking|just\s+kidding|just\s+joking|kidding|joking)\b)[\W_]*$")
