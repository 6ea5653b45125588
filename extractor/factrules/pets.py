"""Rules that extract the user's pets and their names."""

from __future__ import annotations

import re

from .fragments import (
    FOREIGN_MY,
    NAME,
    NOT_LETTER_BEFORE,
    OTHER_HEAD,
    PET_ADJECTIVES,
    PETS,
    PLACE_NC,
    PLURALS,
    RELATIVES,
)
from .lexicons import NATIONALITIES, NOT_INTRO, NOT_NAMES, PEOPLE_NOUNS, is_job
from .rule import Apposition, Groups, Rule
from .values import foreign_kin_fact, is_proper, pet_fact, several_fact


def _pet_named_is(m):
    """ "Our dog is Ragnar": not "my dog is German" or "my cat is OK"."""
    lowered = m.group(2).split()[0].lower()
    if (
        lowered in NATIONALITIES
        or lowered in NOT_INTRO
        or re.fullmatch(PETS, lowered)
        or lowered.endswith(("ish", "ese", "ian", "ic", "ous", "ive", "ly", "ful", "less"))
    ):
        return None
    return pet_fact(m)


def _pet_reversed(m):
    if m.group(1).split()[0].lower() in NOT_NAMES or not is_proper(m.group(1)):
        return None
    return f"pet:{m.group(1).lower()}", f"User has a {m.group(2).lower()} named {m.group(1)}"


def _adopted(m):
    """ "we adopted a lurcher called Juniper": what is adopted or rescued and named is a pet, unless a
    person."""
    kind = m.group(1).lower()
    if (
        kind.split()[-1] in PEOPLE_NOUNS
        or re.fullmatch(RELATIVES, kind.split()[-1])
        or is_job(kind.split()[-1])
    ):
        return None
    return pet_fact(Groups(kind, m.group(2)))


def _pet_in_brackets(m):
    return pet_fact(Groups(m.group(2), m.group(1)))


# "dog mum to Biscuit", "proud cat dad of Miso and Tofu": the user's pet.
def _pet_parent(m):
    if OTHER_HEAD.search(m.string, 0, m.start()):
        return None
    found = [pet_fact(Groups(m.group(1), m.group(2)))]
    if m.group(3):
        found.append(pet_fact(Groups(m.group(1), m.group(3))))
    return [f for f in found if f]


PET_HAVE_NAMED = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got|we\s+have|we've\s+got|(?:I|we)\s+(?:just\s+)?(?:adopted|got)|(?:I|we)\s+own|"
    r"(?:I've|we've)\s+(?:just\s+)?(?:adopted|got)|I've|we've)\s+(?i:an?|another)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))\s+(?i:named|called|and\s+named\s+(?:him|her|it|them))\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    pet_fact,
    0.9,
    slot="pet",
    alone=True,
)
PET_REVERSED = Rule(
    NAME
    + r"\s+(?i:is\s+(?:my|our))\s+(?i:(?:little\s+|old\s+|rescue\s+)?)((?i:"
    + PETS
    + r"))\s*(?:$|[,.!;])",
    _pet_reversed,
    0.85,
    slot="pet",
    alone=True,
)
PET_NAME_IS = Rule(
    r"(?i:my|our)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?:(?:'s|s)?\s+name\s+is|(?:\s+is|'s)\s+(?:named|called))\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    pet_fact,
    0.9,
    slot="pet",
    alone=True,
)
PET_NAME_IN_COMMAS = Rule(
    r"(?i:my|our)\s+(?i:(?:little\s+|old\s+|rescue\s+)?)((?i:" + PETS + r")),\s+" + NAME + r",",
    pet_fact,
    0.85,
    slot="pet",
    alone=True,
)
PET_HAVE_COMMA_NAME = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got|we\s+have|we've\s+got|we\s+have\s+got|(?:I|we)\s+(?:just\s+)?(?:adopted|got|rescued)|"
    r"(?:I've|we've)\s+(?:just\s+)?(?:adopted|got|rescued))\s+an?\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r")),\s+"
    + NAME
    + r"\s*(?:$|[.!;,])",
    pet_fact,
    0.85,
    slot="pet",
    alone=True,
)
# "I have way too many pets, including a ferret called Gnocchi": one of the user's own, named.
PET_AMONG_MANY = Rule(
    r"(?i:I\s+have|I've\s+got|we\s+have|we've\s+got)\s+[^,.!?;]{1,60},\s+(?i:including|like|incl\.?|plus)\s+an?\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))\s+(?i:named|called)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    pet_fact,
    0.8,
    slot="pet",
    alone=True,
)
# "Our dog is Ragnar, a very dramatic husky": the pet's name, then (often) what it is.
PET_NAMED_IS = Rule(
    r"(?i:my|our)\s+((?i:" + PETS + r"))\s+(?i:is)\s+" + NAME + r"\s*(?:$|[.!;]|,\s+(?i:an?|the|my|our)\s)",
    _pet_named_is,
    0.8,
    slot="pet",
    alone=True,
)
PET_COMMA_KIND_NAMED = Rule(
    r"(?i:my|our)\s+((?i:"
    + PETS
    + r")),\s+(?i:an?)\s+(?:[\w\-]+\s+){0,3}?(?i:called|named)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    pet_fact,
    0.8,
    slot="pet",
    alone=True,
)
SEVERAL = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got|we\s+have|we've\s+got|we\s+have\s+got)\s+(?:(?i:two|three|four|2|3|4)\s+(?:(?i:little|young|small|grown-up|grown|teenage|adult|older|younger|twin)\s+)?|"
    r"(?i:twin)\s+)((?i:"
    + PLURALS
    + r")),?\s+"
    + NAME
    + r"(?:,\s+"
    + NAME
    + r")?,?\s+(?i:and)\s+"
    + NAME
    + r"\s*(?:$|[.!;,])",
    several_fact,
    0.85,
    slot="pet",
    alone=True,
)
ADOPTED = Rule(
    r"(?:(?i:I|we)(?:'ve|\s+have)?\s+)?(?:(?i:just|recently|finally)\s+)?(?i:adopted|rescued|fostered|took\s+in)\s+(?i:an?|another)\s+"
    r"((?:(?!and\b)[a-z\-]+\s+){0,1}(?!and\b)[a-z\-]+)(?:\s+(?i:in|from)\s+"
    + PLACE_NC
    + r")?,?\s+(?:(?i:and)\s+)?(?i:named|called)\s+"
    r"(?:(?i:him|her|it|them)\s+)?" + NAME + r"(?=$|[\s,.!;])",
    _adopted,
    0.8,
    slot="pet",
    alone=True,
)
PET_NAME_FIRST = Rule(
    r"(?:(?i:meet|say\s+hi\s+to|this\s+is|introducing)\s+)?"
    + NAME
    + r",\s+(?i:my|our)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?=$|[\s,.!;])",
    lambda m: pet_fact(Groups(m.group(2), m.group(1))),
    0.8,
    slot="pet",
    alone=True,
)
PET_KIND_NAMED = Rule(
    r"(?i:my|our)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?:,|\s+is)\s+(?i:an?)\s+(?:[\w\-]+\s+){0,3}?(?i:called|named)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    pet_fact,
    0.8,
    slot="pet",
    alone=True,
)
PET_ADOPTED_AND_NAMED = Rule(
    r"(?:(?i:I|we)(?:'ve|\s+have)?\s+)?(?:(?i:just)\s+)?(?i:got|adopted|rescued)\s+(?i:an?|another)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?:\s+(?i:last\s+(?:week|month|year|weekend)|this\s+(?:week|month|year|weekend)|yesterday|today|"
    r"recently))?,?\s+(?:(?i:and)\s+)?(?i:named|called)\s+(?i:him|her|it|them)\s+" + NAME + r"(?=$|[\s,.!;])",
    pet_fact,
    0.8,
    slot="pet",
    alone=True,
)
# "we just adopted a rescue greyhound, she's called Pimienta": the pet and its name in one clause.
PET_ADOPTED_SHE_IS_CALLED = Rule(
    r"(?i:I|we)(?:'ve|\s+have)?\s+(?:(?i:just|recently|finally)\s+)?(?i:got|adopted|rescued|have|took\s+in)\s+(?i:an?|another)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r")),?\s+(?:(?i:and)\s+)?(?i:she's|he's|she\s+is|he\s+is|it's|they're|who's|her\s+name's|"
    r"his\s+name's|her\s+name\s+is|his\s+name\s+is)\s+(?:(?i:called|named)\s+)?" + NAME + r"(?=$|[\s,.!;])",
    pet_fact,
    0.8,
    slot="pet",
    alone=True,
)
# "Kibo (my puppy) is asleep on my arm".
PET_IN_BRACKETS_ANYWHERE = Apposition(
    NAME + r"\s+\((?i:my|our)\s+" + PET_ADJECTIVES + r"((?i:" + PETS + r"))\)", _pet_in_brackets, slot="pet"
)
PET_ANYWHERE = Apposition(
    r"\b(?i:my|our)\s+" + PET_ADJECTIVES + r"((?i:" + PETS + r"))\s+" + NAME + r"(?=$|[\s,.!;])",
    pet_fact,
    slot="pet",
)
# "mijn hond Kees", "mi perro Toby", "meri wife Meenakshi": a possessive of another language before a kin
# word.
FOREIGN_KIN_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + FOREIGN_MY + r"\s+([^\W\d_]{3,12})\s+" + NAME + r"(?=$|[\s,.!;])",
    foreign_kin_fact,
    slot="pet",
)
# "one cat (Kluska)", "a dog (Bruno)", "two cats (Lahmacun and Fıstık)": pets named in brackets.
PET_KIND_THEN_NAME_IN_BRACKETS_ANYWHERE = Apposition(
    r"(?<![\w'])(?i:one|a|an|two|three|2|3)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))(?i:s|es)?\s*+\("
    + NAME
    + r"(?:(?:\s*+[,&]|\s+(?i:and))\s*+"
    + NAME
    + r")?\)",
    lambda m: [f for f in (pet_fact(m), m.group(3) and pet_fact(Groups(m.group(1), m.group(3)))) if f],
    slot="pet",
)
# "living in Daejeon with a cat named Kimbap": a pet the user lives with (not after someone else).
PET_LIVING_WITH_ANYWHERE = Apposition(
    r"\b(?i:with)\s+(?i:a|an|my|our)\s+"
    + PET_ADJECTIVES
    + r"((?i:"
    + PETS
    + r"))\s+(?i:named|called)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    lambda m: not OTHER_HEAD.search(m.string, max(0, m.start() - 200), m.start()) and pet_fact(m),
    slot="pet",
)
PET_PARENT_ANYWHERE = Apposition(
    r"(?<![\w'])((?i:dog|cat|bunny|rabbit|hamster|horse|bird|parrot|guinea\s+pig|ferret|chicken|goat|plant))\s+"
    r"(?i:mum|mom|mama|momma|dad|daddy|papa|parent|mother|father)\s+(?i:to|of)\s+"
    + NAME
    + r"(?:(?:\s*+[,&]|\s+(?i:and))\s*+"
    + NAME
    + r")?(?=$|[\s,.!;(])",
    _pet_parent,
    slot="pet",
)
