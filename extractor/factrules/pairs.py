"""Facts that two clauses in a row say together ("meet Noodle, | my axolotl", "my job? | nurse."), and the
words before an apposition that make it no fact (a negation, a death).
"""

from __future__ import annotations

import re

from .fragments import ALLERGEN_FORM, FILLER, HEDGES, NAME, PET_ADJECTIVES, PETS, PLACE, RELATIVES
from .lexicons import NOT_INTRO, NOT_NAMES
from .rule import Groups
from .values import (
    age_fact,
    clean_object,
    clean_place,
    job_fact,
    name_fact,
    pet_fact,
    relative_fact,
    slot_key,
)

# After a possessive, these say the pet or relative is gone ("Our old cat Felix died last year").
DECEASED = re.compile(
    r",?\s*+(?:(?i:who|sadly|unfortunately|recently|just|has|had)\s+){0,2}(?i:died|passed(?:\s+away|\s+on)?|"
    r"was\s+put\s+down|is\s+(?:gone|no\s+more)|crossed\s+the\s+rainbow\s+bridge|RIP|rest(?:s|ed)?\s+in\s+peace)\b"
)
# Before a possessive, these make it no statement about the user's own pet or relative.
NEGATIONS = re.compile(
    r"\b(?:not|no|never|none|without|n't|no\s+longer|anymore|ex|former|late|lost|miss|re-?homed?|rehoming|"
    r"gave\s+(?:away|up)|given\s+(?:away|up)|give\s+(?:away|up)|surrender(?:ed)?|sold|put\s+down|used\s+to)\b|n't\b",
    re.IGNORECASE,
)
# "We have a dog. His name is Rex.": the pet is named in the clause after.
_PET_NAME_AFTER = re.compile(
    r"(?:(?i:his|her|its|their)\s+name(?:'s|\s+is)|(?i:an?)\s+(?:[\w\-]+\s+){0,3}?(?i:called|named)|"
    r"(?i:she's|he's|she\s+is|he\s+is|it's)\s+(?i:called|named))\s+" + NAME + r"\s*(?:$|[.!;,])"
)
_PET_BEFORE = re.compile(
    FILLER
    + r"(?i:(?:I|we)\s+(?:have|(?:just\s+)?(?:got|adopted))|(?:I've|we've)\s+(?:got|(?:just\s+)?adopted)|"
    r"I\s+have\s+got|we\s+have\s+got)\s+(?i:an?|another)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?:\s+(?i:last\s+(?:week|month|year|weekend)|this\s+(?:week|month|year|weekend|morning)|yesterday|"
    r"today|recently))?\s*[.!]*$"
)
_KIN_BEFORE = re.compile(
    FILLER + r"(?i:my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+)?)(" + RELATIVES + r")\s*[,.!]*$"
)
# "meet Noodle, my axolotl": a name, then (split off at ", my") the pet it is.
_PET_ALONE = re.compile(r"(?i:my|our)\s+" + PET_ADJECTIVES + r"((?i:" + PETS + r"))\s*[.!]*$")
_NAME_BEFORE = re.compile(
    FILLER + r"(?:(?i:meet|say\s+hi\s+to|this\s+is|introducing|and\s+this\s+is)\s+)?" + NAME + r"\s*,?$"
)
# "Shellfish makes me sick, I'm allergic.": the allergen is named in the clause before.
_BARE_ALLERGY = re.compile(
    r"(?:I'm|I\s+am)\s+(?:very\s+|severely\s+|really\s+|badly\s+)?allergic(?:\s+to\s+(?:it|them))?\s*(?:[.!]?$|,)"
)
_ALLERGEN_BEFORE = re.compile(
    FILLER + r"(?:([A-Za-z][a-z\-]{1,30}(?:\s+[a-z\-]{1,30})?)\s+(?:makes|make|gives|give)\s+me\s+"
    r"(?:sick|ill|hives|a\s+rash|itchy)|I\s+(?:can't|cannot|don't|do\s+not)\s+(?:eat|have|touch|drink)\s+"
    r"([a-z][a-z\-]{1,30}(?:\s+[a-z\-]{1,30})?)|"
    r"([a-z][a-z\-]{1,30}\s+(?i:stings?|bites?)))\s*$"
)  # "jellyfish stings, | I'm allergic"
# "My family is from Tangier, I was born there.": the place of the clause before is the user's origin.
_BORN_THERE = re.compile(
    FILLER
    + r"(?:I\s+was\s+(?:born|raised|brought\s+up)|I\s+grew\s+up)\s+there(?:\s+(?:too|as\s+well|myself))"
    r"?\s*[.!]?$"
)
_FAMILY_FROM = re.compile(
    FILLER
    + r"(?i:my|our)\s+(?i:family|parents|folks|people|mum|mom|dad|mother|father)\s+(?i:is|are|was|were|"
    r"comes?)\s+(?:(?i:originally)\s+)?(?i:from)\s+" + PLACE + r"\s*[.!,]?$"
)
# "my job? tattoo artist.": the user asks the question and answers it in the next sentence.
ASKED = re.compile(FILLER + r"(?:(?i:my)\s+)?((?i:job|occupation|profession|work|name|age))\s*\?")
_ANSWER_JOB = re.compile(r"((?:[A-Za-z\-]+\s+){0,2}[A-Za-z\-]+)\s*(?:$|[.!;,])")
_ANSWER_NAME = re.compile(NAME + r"\s*(?:$|[.!;,])")
_ANSWER_AGE = re.compile(r"(\d{1,3})\s*(?:$|[.!;,])")


def answer_fact(asked: str, clause: str):
    """The answer to the user's own question ("my job? tattoo artist."), or None."""
    if asked in ("job", "occupation", "profession", "work"):
        return (m := _ANSWER_JOB.match(clause)) and job_fact(Groups(m.group(1).lower()))
    if asked == "name":
        m = _ANSWER_NAME.match(clause)
        if not m or m.group(1).split()[0].lower() in NOT_NAMES | NOT_INTRO | {
            "yes",
            "no",
            "nope",
            "none",
            "nothing",
            "secret",
        }:
            return None
        return name_fact(m)
    return (m := _ANSWER_AGE.match(clause)) and age_fact(m)


def pair_facts(before: str, clause: str, add) -> None:
    """Call `add(built, confidence)` with what `before` (the clause before, if a statement) and `clause` say
    together."""
    if (kind := _PET_ALONE.match(clause)) and (named := _NAME_BEFORE.match(before)):
        if built := pet_fact(Groups(kind.group(1), named.group(1))):
            add(built, 0.75)  # "meet Noodle, | my axolotl"
    if (named := _PET_NAME_AFTER.match(clause)) and (pet := _PET_BEFORE.match(before)):
        if built := pet_fact(Groups(pet.group(1), named.group(1))):
            add(built, 0.8)
    if (named := _PET_NAME_AFTER.match(clause)) and (kin := _KIN_BEFORE.match(before)):
        if built := relative_fact(Groups(kin.group(1), named.group(1))):
            add(built, 0.8)  # "my wife, | her name is Jamila, …"
    if _BORN_THERE.match(clause) and (family := _FAMILY_FROM.match(before)):
        add(
            ("origin", f"User is from {clean_place(family.group(1))}"), 0.75
        )  # "My family is from Tangier, I was born there."
    if _BARE_ALLERGY.match(clause) and (allergen := _ALLERGEN_BEFORE.match(before)):
        obj = clean_object(next(g for g in allergen.groups() if g))
        if obj and not HEDGES.search(before):
            add(
                (f"allergy:{slot_key(ALLERGEN_FORM.sub('', obj))}", f"User is allergic to {obj.lower()}"), 0.8
            )
