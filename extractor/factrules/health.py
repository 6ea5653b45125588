"""Rules that extract the user's allergies, intolerances and diet."""

from __future__ import annotations

import re

from .fragments import (
    ALLERGEN_FORM,
    DETERMINERS,
    DIET_WORDS,
    DIETS,
    NO_VALUE,
    NOT_LETTER_BEFORE,
    PRONOUNS,
    REST,
)
from .rule import Apposition, Groups, Rule
from .values import allergy_fact, diet_fact, slot_key, someone_else_before


def _intolerance(m):
    """ "I'm lactose intolerant" is the diet "lactose-intolerant" (see DIETS), others an intolerance of their
    own."""
    what = m.group(1).lower()
    if f"{what}-intolerant" in DIETS:
        return "diet", f"User is {what}-intolerant"
    return f"intolerance:{what}", f"User is {what}-intolerant"


def _allergy_noun(m):
    return (
        f"allergy:{slot_key(ALLERGEN_FORM.sub('', m.group(1)))}",
        f"User is allergic to {m.group(1).lower()}",
    )


def _allergy_first(m):
    """ "penicillin allergy - please note it": the allergen opens the statement."""
    what = m.group(1)
    if what.lower().split()[0] in DETERMINERS | PRONOUNS | {
        "any",
        "food",
        "severe",
        "mild",
        "bad",
        "no",
        "allergy",
    }:
        return None
    return _allergy_noun(Groups(what))


def _diet_since(m):
    return diet_fact(Groups(m.group(1)))


def _on_diet(m):
    return diet_fact(Groups(m.group(1).lower()))


def _foreign_diet(m):
    word = m.group(1).lower()
    if someone_else_before(m):
        return None
    if re.match(r"(?:v|w)[eé][gj](?:e|é)t", word):
        return "diet", "User is vegetarian"
    return "diet", "User is vegan"


ALLERGY_ALLERGIC_TO = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been)\s+(?:severely\s+|very\s+|mildly\s+|deathly\s+)?(?i:allergic)\s+to\s+"
    + REST,
    allergy_fact,
    0.95,
    slot="allergy",
    alone=True,
)
ALLERGY_NOUN = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got)\s+an?\s+(?:severe\s+|bad\s+|mild\s+)?([a-zA-Z\-]+(?:\s+[a-zA-Z\-]+)?)"
    r"\s+(?i:allergy)(?=$|[\s,.!;])",
    _allergy_noun,
    0.9,
    slot="allergy",
    alone=True,
)
INTOLERANCE = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:very|severely|mildly|a\s+bit)\s+)?(?i:(lactose|gluten|fructose|histamine|dairy)\s+intolerant)"
    r"(?=$|[\s,.!;])",
    _intolerance,
    0.85,
    slot="diet",
    alone=True,
)
DIET_I_AM = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been|we've\s+been|we\s+have\s+been)\s+(?:a\s+|strictly\s+|fully\s+)?([a-z\-]+)"
    r"\s*(?:$|[,.!]|\s+now\b|\s+these\s+days\b|\s+since\b|\s+for\b|\s+(?:and|but)\b)",
    diet_fact,
    0.85,
    slot="diet",
    alone=True,
)
DIET_EAT_ONLY = Rule(
    r"(?i:I\s+(?:only\s+)?eat)\s+((?i:halal|kosher|vegan|vegetarian|plant-based|paleo|keto))(?:\s+(?i:only|food))?\s*(?:$|[,.!;])",
    diet_fact,
    0.75,
    slot="diet",
    alone=True,
)
FIELD_DIET = Rule(
    r"(?i:diet|dietary\s+(?:requirements?|needs|preferences?))\s*:\s*([a-zA-Z\-]+)\s*(?:$|[,.!;])",
    lambda m: diet_fact(Groups(m.group(1).lower())),
    0.75,
    slot="diet",
    alone=True,
)
FIELD_ALLERGY = Rule(
    r"(?i:allerg(?:y|ies))\s*:\s*" + REST,
    lambda m: None if NO_VALUE.match(m.group(1)) else allergy_fact(m),
    0.75,
    slot="allergy",
    alone=True,
)
# Allergies and diets: "penicillin allergy - please note it", "pescatarian since 2018", "I keep kosher".
ALLERGEN_THEN_ALLERGY = Rule(
    r"(?:(?i:severe|serious|mild|bad|bad-ish|major|deadly|life-threatening)\s+)?([a-zA-Z][a-z\-]{2,30}(?:\s+[a-z][a-z\-]{2,30})?)\s+(?i:allergy)(?=\s*(?:$|[,.!;\-–—])|\s+(?i:so|here|btw|please|pls)\b)",
    _allergy_first,
    0.75,
    needs=r"^\W*[A-Za-z][a-z\-]{2,30}(?:\s+[a-z][a-z\-]{2,30}){0,2}\s+(?i:allergy)\b",
    slot="allergy",
    alone=True,
)
DIET_FOR_A_TIME = Rule(
    r"([a-zA-Z][a-z\-]{3,20})\s+(?i:since\s+\d{4}|since\s+(?:I\s+was|childhood|uni|college)|for\s+(?:(?:about|almost|nearly|over|around|roughly|some)\s+)?(?:\d{1,2}|a\s+few|many|several|"
    r"two|three|four|five|six|seven|eight|nine|ten|twenty)\s+years|all\s+my\s+life)\b(?!.*\b(?:then|until|till|gave|quit|stopped|anymore|longer)\b)",
    lambda m: _diet_since(Groups(m.group(1).lower())),
    0.75,
    needs=r"^(?!.*\b(?:then|until|till|gave|quit|stopped|anymore|longer)\b)\W*[A-Za-z][a-z\-]{3,20}\s+(?i:since|for|all)\b",
    slot="diet",
    alone=True,
)
DIET_KEEP_KOSHER_OR_HALAL = Rule(
    r"(?i:I\s+keep|I\s+eat|we\s+keep)\s+((?i:kosher|halal))\b",
    lambda m: diet_fact(Groups(m.group(1).lower())),
    0.8,
    slot="diet",
    alone=True,
)
# "I'm on a strict keto diet", "I follow a vegan diet", "I eat halal".
ON_DIET = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been|I\s+follow|I\s+stick\s+to|I\s+keep\s+to)\s+(?:(?i:on)\s+)?(?i:an?|the)\s+"
    r"(?:(?i:strict|strictly|mostly|fully|pretty\s+strict|very\s+strict|low-carb)\s+)?([a-zA-Z\-]+)\s+(?i:diet)\b",
    _on_diet,
    0.8,
    slot="diet",
    alone=True,
)
# "hornet stings — allergic, badly", "peanuts: allergic": the allergen first, at the start of the message.
ALLERGY_FIRST = Rule(
    r"([a-z][a-z\-]{2,20}(?:\s+[a-z][a-z\-]{2,20})?)\s*+[—–:,\-]+\s*+(?:(?i:I'm|I\s+am)\s+)?(?:(?i:very|badly|severely|seriously|"
    r"deathly|really)\s+)?(?i:allergic)\b(?!\s+(?i:to|reaction))",
    _allergy_first,
    0.75,
    needs=r"^\W*[a-z][a-z\-]{2,20}(?:\s+[a-z][a-z\-]{2,20})?\s*[—–:,\-]",
    slot="allergy",
    alone=True,
)
FOREIGN_DIET_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + r"(?i:soy|sono|sou|je\s+suis|sunt|sóc|ich\s+bin|bin|ik\s+ben|jeg\s+er|jag\s+är|eg\s+er|jestem|jsem|"
    r"som|sam|olen|ben|saya|aku|ani|eimai|ako\s+ay|mimi\s+ni|ek\s+is)\s+(?:(?i:strikt|strictly|estrictamente|"
    r"strettamente|completamente|totalmente|seit\s+\w+|ganz|ein|eine|een|un|una|um|uma)\s+)?"
    r"((?:v|w|V|W)[eé][gj][\w]{1,14})(?=$|[\s,.!;])",
    lambda m: DIET_WORDS.match(m.group(1)) and _foreign_diet(m),
    slot="diet",
    gated=True,
)
