"""Rules that extract the user's relatives: spouses and partners, children, parents, siblings, named kin, and
kin words of other languages.
"""

from __future__ import annotations

import re

from .fragments import (
    FOREIGN_MY,
    HONORIFIC,
    NAME,
    NOT_LETTER_BEFORE,
    PETS,
    PLURALS,
    PRONOUNS,
    RELATIVES,
    UPPER,
)
from .lexicons import NOT_INTRO, NOT_NAMES
from .rule import Apposition, Groups, Rule
from .values import foreign_kin_fact, is_proper, relative_fact, several_fact


def _relative_reversed(m):
    """ "Maëlle is my sister", "Kofi, my husband, …": the name comes first."""
    if m.group(1).split()[0].lower() in NOT_NAMES or m.group(1).lower() in PRONOUNS:
        return None
    return relative_fact(Groups(m.group(2), m.group(1)))


KIDS = ("kid", "kids", "child", "children")


def _kids_are(m):
    """ "My kids are Leo and Mia", "Our cats are Biscuit and Miso"."""
    kind = m.group(1).lower()
    names = [n for n in (m.group(2), m.group(3), m.group(4)) if n]
    if any(n.split()[0].lower() in NOT_NAMES or not is_proper(n) for n in names):
        return None
    if kind in KIDS:
        return [(f"family:child:{n.lower()}", f"User's child is {n}") for n in names]
    return several_fact(Groups(kind, m.group(2), m.group(3), m.group(4)))


def _baby(m):
    kind, name = m.group(1).lower(), m.group(2)
    if name.split()[0].lower() in NOT_NAMES or not is_proper(name):
        return None
    relative = "daughter" if kind in ("girl", "daughter") else "son"
    return f"family:{relative}:{name.lower()}", f"User's {relative} is {name}"


def _named_our(m):
    """ "We named our daughter Thảo", "I named my puppy Taco"."""
    kind, name = m.group(1).lower(), m.group(2)
    if name.split()[0].lower() in NOT_NAMES or not is_proper(name):
        return None
    if re.fullmatch(RELATIVES, kind):
        return relative_fact(Groups(kind, name))
    return f"pet:{name.lower()}", f"User has a {kind} named {name}"


def _spouse(m):
    name = m.group(1)
    if not is_proper(name):
        return None
    return "family:spouse", f"User is married to {name}"


def _gendered_kids(m):
    """ "two kids, a boy called Lior and a girl called Noa"."""
    out = []
    for kind, name in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
        if not is_proper(name) or name.split()[0].lower() in NOT_NAMES:
            return None
        out.append(relative_fact(Groups("son" if kind.lower() == "boy" else "daughter", name)))
    return [x for x in out if x] or None


_FOREIGN_IS_CALLED = (
    r"(?i:se\s+llama|se\s+chama|s'appelle|heißt|heisst|si\s+chiama|chamado|chamada|llamado|llamada|heet)"
)
# The kin words a named relative may follow ("my fiancée Lotte").
_KIN_WORDS = (
    r"(?i:wife|husband|partner|fiancée|fiancee|fiancé|fiance|boyfriend|girlfriend|son|daughter|"
    r"sister|brother|mum|mom|dad|mother|father)"
)


def _kin_named(m):
    return relative_fact(
        Groups(m.group(1).lower().replace("fiancee", "fiancée").replace("fiance", "fiancé"), m.group(2))
    )


def _engaged(m):
    name = m.group(1)
    if not is_proper(name) or name.split()[0].lower() in NOT_NAMES | NOT_INTRO:
        return None
    return "family:spouse", f"User is engaged to {name}"


RELATIVE_HAVE_COMMA_NAME = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got|we\s+have|we've\s+got|we\s+have\s+got)\s+an?\s+"
    r"(?i:(?:older\s+|younger\s+|little\s+|big\s+|twin\s+|baby\s+)?)((?i:"
    + RELATIVES
    + r")),\s+"
    + NAME
    + r"\s*(?:$|[.!;,])",
    relative_fact,
    0.85,
    slot="family",
    alone=True,
)
SPOUSE = Rule(
    NAME + r"\s+(?i:and\s+I\s+(?:got|are|were)\s+married)\b", _spouse, 0.85, slot="family", alone=True
)
SPOUSE_MARRIED_OR_ENGAGED_TO = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:married|engaged)\s+to\s+" + NAME + r"(?=$|[\s,.!;])",
    _spouse,
    0.9,
    slot="family",
    alone=True,
)
PARENT_NAME_IS = Rule(
    r"((?i:mum|mom|mam|dad|mother|father|grandma|grandpa|granny|nana))(?:'?s\s+name\s+is|(?:\s+is|'s)\s+(?:named|called))\s+"
    + NAME
    + r"\s*(?:$|[,.!;]|\s+(?i:and|but)\s+(?i:she|he|they)\b)",
    relative_fact,
    0.8,
    slot="family",
    alone=True,
)
# 1: "my son's name is Kojo not Kwame".
RELATIVE_NAME_IS = Rule(
    r"(?i:my)\s+(" + RELATIVES + r")(?:'?s\s+name\s+is|(?:\s+is|'s)\s+(?:named|called)|\s+is)\s+"
    r"(?:(?i:actually|really|now|still)\s+)?"
    + NAME
    + r"\s*(?:$|[,.!;]|\s+(?i:and|but)\s+(?i:she|he|they|she's|he's|they're|we|we've|we're|yes|yeah|no|so)\b|"
    r"\s+(?i:not)\s+(?=" + UPPER + r"))",
    relative_fact,
    0.85,
    slot="family",
    alone=True,
)
# "my wife Dana and I adopted…" is split before "I…": "my wife Dana" is then the whole clause.
RELATIVE_NAMED_AS_SUBJECT = Rule(
    r"(?i:my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+|twin\s+|oldest\s+|youngest\s+)?)("
    + RELATIVES
    + r"),?\s+"
    + NAME
    + r"(?:,?\s+(?i:is|lives|works|was|has|just|loves|likes)\b|$)",
    relative_fact,
    0.85,
    slot="family",
    alone=True,
)
RELATIVE_NAME_IN_COMMAS = Rule(
    r"(?i:my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+|twin\s+|oldest\s+|youngest\s+)?)((?i:"
    + RELATIVES
    + r")),\s+"
    + NAME
    + r",",
    relative_fact,
    0.85,
    slot="family",
    alone=True,
)
RELATIVE_REVERSED = Rule(
    NAME
    + r"\s+(?i:is\s+my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+|twin\s+)?)("
    + RELATIVES
    + r")\s*(?:$|[,.!;])",
    _relative_reversed,
    0.85,
    slot="family",
    alone=True,
)
RELATIVE_NAME_FIRST_IN_COMMAS = Rule(
    NAME
    + r",\s+(?i:my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+|twin\s+)?)("
    + RELATIVES
    + r"),",
    _relative_reversed,
    0.85,
    slot="family",
    alone=True,
)
NAMED_BY_US = Rule(
    r"(?i:I|we)\s+(?i:named|called)\s+(?i:my|our|the)\s+(?i:(?:new\s+|baby\s+|little\s+)?)((?i:"
    + RELATIVES
    + "|"
    + PETS
    + r"))\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    _named_our,
    0.85,
    slot="family",
    alone=True,
)
KIDS_NAMES_ARE = Rule(
    r"(?i:my|our)\s+(?:(?i:two|three|four|2|3|4)\s+)?((?i:kids|children|"
    + PLURALS
    + r"))\s+(?i:are)\s+(?:(?i:called|named)\s+)?"
    + NAME
    + r"(?:,\s+"
    + NAME
    + r")?,?\s+(?i:and)\s+"
    + NAME
    + r"\s*(?:$|[.!;,])",
    _kids_are,
    0.85,
    slot="family",
    alone=True,
)
KIDS_NAMES_IN_COMMAS = Rule(
    r"(?i:my|our)\s+((?i:kids|children|"
    + PLURALS
    + r")),\s+"
    + NAME
    + r"(?:,\s+"
    + NAME
    + r")?,?\s+(?i:and)\s+"
    + NAME
    + r",",
    _kids_are,
    0.8,
    slot="family",
    alone=True,
)
BABY = Rule(
    r"(?i:(?:I|we)\s+(?:just\s+)?(?:had|welcomed)|(?:I've|we've)\s+(?:just\s+)?(?:had|welcomed))\s+(?i:a|our)\s+"
    r"(?i:(?:baby|little|new)\s+)?((?i:girl|boy|daughter|son)),?\s+(?:(?i:named|called)\s+)?"
    + NAME
    + r"(?=$|[\s,.!;])",
    _baby,
    0.85,
    slot="family",
    alone=True,
)
RELATIVE_HAVE_NAMED = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got)\s+an?\s+(?i:(?:older\s+|younger\s+|little\s+|big\s+|twin\s+)?)("
    + RELATIVES
    + r")\s+(?i:named|called)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    relative_fact,
    0.85,
    slot="family",
    alone=True,
)
# Family and pets: "a boy called Lior and a girl called Noa", "Kibo (my puppy)".
GENDERED_KIDS = Rule(
    r"(?i:I\s+have|I've\s+got|we\s+have|we've\s+got)\s+(?i:two|2)\s+(?i:kids|children),?\s+(?i:an?)\s+((?i:boy|girl))\s+"
    r"(?i:called|named)\s+"
    + NAME
    + r",?\s+(?i:and)\s+(?i:an?)\s+((?i:boy|girl))\s+(?i:called|named)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    _gendered_kids,
    0.8,
    slot="family",
    alone=True,
)
RELATIVE_HAVE_SHE_IS_CALLED = Rule(
    r"(?i:I\s+have|I've\s+got|we\s+have|we've\s+got)\s+(?i:an?)\s+(?i:(?:little\s+|older\s+|younger\s+|baby\s+|grown-up\s+)?)("
    + RELATIVES
    + r"),\s+(?i:she's|he's|they're|she\s+is|he\s+is)\s+(?i:called|named)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    relative_fact,
    0.8,
    slot="family",
    alone=True,
)
# Family and pets named in another language.
FOREIGN_KIN_IS_CALLED = Rule(
    FOREIGN_MY + r"\s+([^\W\d_]{3,12})\s+" + _FOREIGN_IS_CALLED + r"\s+" + NAME + r"(?=$|[\s,.!;])",
    foreign_kin_fact,
    0.8,
    slot="family",
    alone=True,
)
# "I married Thijs in June": the spouse.
SPOUSE_MARRIED = Rule(
    r"(?i:I\s+(?:just\s+|recently\s+|finally\s+)?(?:married|wed))\s+"
    + NAME
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:in|last|this|on|at|and|when|so|after|back|\d)\b)",
    _spouse,
    0.8,
    slot="family",
    alone=True,
)
# "tenho um papagaio chamado Zé Pequeno", "ik heb een hond die Kees heet".
FOREIGN_KIN_HAVE_NAMED = Rule(
    r"(?i:tenho|tengo|j'ai|ich\s+habe|ik\s+heb|we\s+hebben)\s+(?i:um|uma|un|una|une|einen|eine|ein|een)\s+([^\W\d_]{3,12})\s+"
    r"(?i:chamad[oa]|llamad[oa]|qui\s+s'appelle|appelée?|namens|genaamd)\s+" + NAME + r"(?=$|[\s,.!;])",
    foreign_kin_fact,
    0.8,
    slot="family",
    alone=True,
)
# "I've got a wife Irina and a dog", "I have a husband, Tomasz": a relative after "have", with or without a
# comma.
KIN_NAMED_AFTER_HAVE = Rule(
    r"(?i:I\s+have|I've\s+got|I\s+have\s+got|I\s+got)\s+(?i:an?)\s+(?:(?i:lovely|beautiful|wonderful|amazing|little|older|younger)\s+)?("
    + _KIN_WORDS
    + r"),?\s+(?:(?i:called|named)\s+)?"
    + NAME
    + r"(?=$|[\s,.!;])",
    _kin_named,
    0.75,
    slot="family",
    alone=True,
)
# "Fiancée's name is Torunn": the possessive dropped, as chat drops it.
KIN_NAME_IS_WITHOUT_MY = Rule(
    "(" + _KIN_WORDS + r")'s\s+(?i:name)\s+(?i:is)\s+" + NAME + r"(?=$|[\s,.!;])",
    _kin_named,
    0.75,
    slot="family",
    alone=True,
)
# "got engaged to Rosamund last night!!!", "I just got engaged to Tomasz".
ENGAGED = Rule(
    r"(?:(?i:I|we)\s+)?(?:(?i:just|finally|recently|officially)\s+)?(?i:got)\s+(?i:engaged)\s+(?i:to)\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    _engaged,
    0.8,
    slot="family",
    alone=True,
)
# "hubby Cosimo and I hve been vegetarian…", "wifey Dana and me": a spouse named before "and I", the "my" left
# out.
SPOUSE_BEFORE_AND_I = Rule(
    r"((?i:hubby|wifey|husband|wife|fiancée|fiancé|fiancee|fiance|boyfriend|girlfriend|bf|gf|other\s+half|better\s+half|partner))\s+"
    + NAME
    + r"(?:\s+(?i:and|&|n)\s+(?:I|me)\b|\s*$)",
    _kin_named,
    0.75,
    slot="family",
    alone=True,
)
RELATIVE_MY_KIN_NAME_ANYWHERE = Apposition(
    r"\b(?i:my)\s+(?i:(?:little\s+|older\s+|younger\s+|big\s+|baby\s+|twin\s+|oldest\s+|youngest\s+)?)("
    + RELATIVES
    + r")\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    relative_fact,
    slot="family",
)
# 1: "my wife's Gráinne and we've a collie": the contraction, only before "and we…" ("my dad's Ford" is his
# car).
RELATIVE_CONTRACTED_BEFORE_AND_WE_ANYWHERE = Apposition(
    r"\b(?i:my)\s+(" + RELATIVES + r")'s\s+" + NAME + r"(?=\s+(?i:and)\s+(?:we|we've|we're)\b)",
    relative_fact,
    slot="family",
)
# "our son Leo": a child or a grandparent is the user's too ("our wife" is no phrase).
RELATIVE_OUR_CHILD_ANYWHERE = Apposition(
    r"\b(?i:our)\s+(?i:(?:little\s+|older\s+|younger\s+|baby\s+|twin\s+|oldest\s+|youngest\s+)?)("
    r"(?i:daughter|son|grandmother|grandfather|grandma|grandpa|mum|mom|mam|dad|mother|father))\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    relative_fact,
    slot="family",
)
FOREIGN_KIN_IS_CALLED_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + FOREIGN_MY
    + r"\s+([^\W\d_]{3,12})\s+"
    + _FOREIGN_IS_CALLED
    + r"\s+"
    + NAME
    + r"(?=$|[\s,.!;])",
    foreign_kin_fact,
    slot="family",
)
RELATIVE_FOREIGN_MY_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + r"(?i:meri|mera|mere|mijn|minun|moja|mój)\s+("
    + RELATIVES
    + r")\s+"
    + NAME
    + r"(?=$|[\s,.!;])(?!\s+(?i:mein|me|se|ko|ka|ki|ke|main|in)\b)",
    relative_fact,
    slot="family",
)
# "on behalf of my father, Mr Horatio Penhaligon", "my mum, Mrs Adaeze Obi,": a relative named with a title.
RELATIVE_WITH_TITLE_ANYWHERE = Apposition(
    r"\b(?i:my)\s+(" + RELATIVES + r"),?\s+" + HONORIFIC + r"\.?\s+" + NAME + r"(?=$|[\s,.!;])",
    relative_fact,
    slot="family",
)
