"""What a matched value becomes: the builders shared by the rules of several slots (a name, a home, a job, an
employer, a relative, a pet, a plan, an age, a diet, an allergy) and the checks they share. Each returns
(slot, text), a list of them, or None.
"""

from __future__ import annotations

import re

from .fragments import (
    ALLERGEN_FORM,
    DETERMINERS,
    DIETS,
    FIELDS,
    FRAMES,
    HEDGES,
    JOB_PART_TAIL,
    NOT_NOW,
    OTHER_HEAD,
    PARTICLES,
    PLURAL_FORMS,
    RELATIVES,
    ROLE_TAIL,
    STAY_WORDS,
    WHEN_WORDS,
)
from .lexicons import (
    LOWER_STOP,
    NATIONALITIES,
    NOT_INTRO,
    NOT_JOB_MODIFIERS,
    NOT_NAMES,
    NOT_NAMES_ABROAD,
    NOT_PLACE_WORDS,
    NOT_PLACES,
    NOT_WORK_PLACES,
    REACTION_WORDS,
    is_job,
    is_job_phrase,
)
from .rule import Groups

TRAILING = re.compile(
    r"\s+(?:a lot|very much|so much|too|as well|also|though|anyway|actually|really|these days|nowadays|now|"
    r"lately|in general|generally|more than anything|most of all|best|the most|more|on weekends|at weekends|"
    r"tbh|lol|haha|imo|honestly|right now|with a passion|on the weekends?|on (?:my )?days? off|in my "
    r"(?:free|spare) time|at night|in the mornings?|in the evenings?|every day|daily|in summer|in "
    r"winter|there|either|too\s+much)$",
    re.IGNORECASE,
)
CUT = re.compile(
    r"\s+(?:but|because|since|although|though|when|whenever|if|unless|while|which|who|so|as|"
    r"and then|and i|especially|except|like)\b.*$",
    re.IGNORECASE,
)


def clean_object(raw: str) -> str | None:
    text = re.split(r"\s*(?:[,;:()]|\s[-–—]\s)", raw.strip(), maxsplit=1)[0]
    text = CUT.sub("", text)
    text = re.sub(r"[\s,;:.!]+$", "", text)
    previous = None
    while previous != text:
        previous = text
        text = TRAILING.sub("", text)
    words = text.split()
    if not words or len(words) > 6:
        return None
    lowered = [w.lower().strip("'\"") for w in words]
    if (
        lowered[0] in ("to",)
        and len(lowered) > 1
        and lowered[1] in ("think", "say", "believe", "know", "be", "see")
    ):
        return None
    if any(w in REACTION_WORDS for w in lowered):
        return None
    if any(not re.fullmatch(r"[\w'&+\-.]+", w) for w in words):
        return None
    return text


def slot_key(obj: str) -> str:
    words = [
        w for w in re.sub(r"[^\w\s\-]", "", obj.lower()).split() if w not in ("the", "a", "an", "my", "to")
    ]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)[:80]


def name_fact(m):
    if re.search(r"-(?:san|sama|kun|chan|sensei)$", m.group(1)):  # "Tanaka-san" is someone else
        return None
    if not is_proper(m.group(1)) or is_job(m.group(1).split()[-1]):  # "Pharmacist here" is a job
        return None
    if m.group(1).split()[0].lower() in NOT_NAMES_ABROAD:
        return None
    if re.fullmatch(rf"(?i:{WHEN_WORDS})", m.group(1).split()[0]) or m.group(1).endswith(
        "'s"
    ):  # "call me Tuesday", "Dr Patel's"
        return None
    return "name", f"User's name is {m.group(1)}"


_WHEN_TAIL = re.compile(rf"\s+(?:on|in|at|for|this|next)\s+(?i:{WHEN_WORDS})s?\b.*$")
_DANGLING = re.compile(r"\s+(?:on|of|upon|I|I'm|I've|I'd|I'll|" + PARTICLES + r")$")  # "Zagrebu I radim…"


def clean_place(raw: str) -> str:
    """The place without a trailing date ("Lisbon on Friday" is Lisbon) or sentence punctuation."""
    return _DANGLING.sub("", _WHEN_TAIL.sub("", raw)).rstrip(".'\"-")


def location_fact(m):
    return "location", f"User lives in {clean_place(m.group(1))}"


def origin_fact(m):
    return "origin", f"User is from {clean_place(m.group(1))}"


def job_fact(m):
    role = re.sub(r"\s+by\s+(?:profession|trade)$", "", m.group(1).strip(), flags=re.IGNORECASE)
    role = re.sub(r"\s+over$", "", ROLE_TAIL.sub("", role), flags=re.IGNORECASE)  # "a nurse for years"
    if not role:
        return None
    words = role.lower().split()
    if not is_job_phrase(words) or any(w in NOT_JOB_MODIFIERS for w in words[:-1]):
        return None
    if words[0] in ("former", "ex", "ex-", "future", "would-be", "wannabe") or words[0].startswith("ex-"):
        return None  # "I'm a former nurse" says what the user is not now
    if words[0] == "retired":
        return "job", f"User is a {role}"
    if role.lower() == "student":
        return "job", "User is a student"
    article = "an" if role[0].lower() in "aeiou" else "a"
    return "job", f"User works as {article} {role}"


def is_proper(name: str) -> bool:
    """Every word of a name opens with a capital (NAME's classes admit any letter after the first),
    and none is a frame or a hedge ("Imagine Kwame and I got married" names nobody)."""
    return all(w[:1].isupper() for w in name.split()) and not FRAMES.search(name) and not HEDGES.search(name)


SPOUSES = {
    "wife",
    "husband",
    "partner",
    "spouse",
    "hubby",
    "wifey",
    "fiancé",
    "fiancée",
}  # fiancé(e) as the labels count it
SINGLE_RELATIVES = {
    "mother": "mother",
    "mom": "mother",
    "mum": "mother",
    "father": "father",
    "dad": "father",
    "mommy": "mother",
    "mama": "mother",
    "mam": "mother",
    "papa": "father",
    "daddy": "father",
    "nanay": "mother",
    "inay": "mother",
    "tatay": "father",
    "itay": "father",
    "tata": "father",
    "eomma": "mother",
    "umma": "mother",
    "appa": "father",
    "mamma": "mother",
    "pabbi": "father",
    "ammi": "mother",
    "abbu": "father",
    "amma": "mother",
    "abba": "father",
    "mẹ": "mother",
    "bố": "father",
    "anne": "mother",
    "baba": "father",
    "tad": "father",
}
# Short and pet forms said for the same relative.
RELATIVE_FORMS = {
    "other half": "partner",
    "better half": "partner",
    "significant other": "partner",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "hubby": "husband",
    "wifey": "wife",
    "fiance": "fiancé",
    "fiancee": "fiancée",
    "sis": "sister",
    "bro": "brother",
    "auntie": "aunt",
    "aunty": "aunt",
    "gran": "grandma",
    "nan": "grandma",
    "nanna": "grandma",
    "grandmom": "grandma",
    "grandpop": "grandpa",
    "granny": "grandma",
    "nana": "grandma",
    "grandad": "grandpa",
    "granddad": "grandpa",
    "lola": "grandma",
    "lolo": "grandpa",
    "babcia": "grandma",
    "dziadek": "grandpa",
    "halmeoni": "grandma",
    "harabeoji": "grandpa",
    "yiayia": "grandma",
    "giagia": "grandma",
    "pappou": "grandpa",
    "papou": "grandpa",
    "afi": "grandpa",
    "nani": "grandma",
    "dadi": "grandma",
    "nanaji": "grandpa",
    "dadaji": "grandpa",
    "bhai": "brother",
    "didi": "sister",
    "abuela": "grandma",
    "abuelo": "grandpa",
    "taid": "grandpa",
    "nain": "grandma",
    "mamgu": "grandma",
    "tadcu": "grandpa",
    "asawa": "spouse",
    "żona": "wife",
    "zona": "wife",
    "mąż": "husband",
    "maz": "husband",
    "mke": "wife",
    "mume": "husband",
}
# One slot per relative whatever the word ("my grandma Chrysoula" and "my grandmother Guðrún" are both a
# grandmother, "my stepdad Wouter" a stepfather), as every labelled set names them; the text keeps the user's
# word.
KIN_SLOTS = {
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "stepdad": "stepfather",
    "stepmum": "stepmother",
    "stepmom": "stepmother",
}


def relative_fact(m):
    relative, name = " ".join(m.group(1).lower().split()), _not_possessive(m.group(2))
    relative = RELATIVE_FORMS.get(relative, relative)
    if (
        name.split()[0].lower() in NOT_NAMES
        or not is_proper(name)
        or name.split()[0].lower() in NATIONALITIES | NOT_INTRO
    ):
        return None
    if relative in SPOUSES:
        return "family:spouse", f"User's {relative} is {name}"
    if relative in SINGLE_RELATIVES:
        return f"family:{SINGLE_RELATIVES[relative]}", f"User's {relative} is {name}"
    return f"family:{KIN_SLOTS.get(relative, relative)}:{name.lower()}", f"User's {relative} is {name}"


def several_fact(m):
    """ "We've got two cats, Biscuit and Miso", "I have two daughters, Amara and Chidi"."""
    kind = PLURAL_FORMS.get(m.group(1).lower())
    names = [n for n in (m.group(2), m.group(3), m.group(4)) if n]
    if not kind or any(n.split()[0].lower() in NOT_NAMES or not is_proper(n) for n in names):
        return None
    if kind in ("kid", "child"):
        return [(f"family:child:{n.lower()}", f"User's child is {n}") for n in names]
    if re.fullmatch(RELATIVES, kind):
        return [relative_fact(Groups(kind, n)) for n in names]
    return [(f"pet:{n.lower()}", f"User has a {kind} named {n}") for n in names]


def plan_fact(m):
    place = clean_place(m.group(1))
    if place.split()[0].lower() in ("the",) and len(place.split()) == 1:
        return None
    if re.fullmatch(RELATIVES + r"|grandma|grandpa|granny|nana|family|friends|home|work", place.lower()):
        return None  # "I'm visiting Mom": a person, not a place
    return f"plan:{place.lower()[:80]}", f"User plans to go to {place}"


# A name before one of these is part of a place, not the employer ("at the IVF unit", "at Bodija market").
_PART_OF_PLACE = re.compile(
    r"\s++(?i:unit|ward|department|dept|section|wing|market|bazaar|stall|desk|counter|square)\b"
)


def employer_fact(m):
    org = m.group(1)
    if re.fullmatch(r"\w{1,3}\.", org.split()[-1]):  # "at St." — the sentence was cut at an abbreviation
        return None
    if isinstance(m, re.Match) and _PART_OF_PLACE.match(m.string, m.end(1)):
        return None
    return "employer", f"User works at {clean_place(org)}"


def allergy_fact(m):
    obj = clean_object(m.group(1))
    if not obj or re.match(rf"(?i:{WHEN_WORDS})", obj):  # "allergic to Mondays" is a joke
        return None
    return f"allergy:{slot_key(ALLERGEN_FORM.sub('', obj))}", f"User is allergic to {obj}"


def _not_possessive(name: str) -> str:
    """ "my sister Ana's husband" names the sister Ana."""
    return name[:-2] if name.endswith("'s") else name


def pet_fact(m):
    if not is_proper(m.group(2)) or m.group(2).split()[0].lower() in NOT_NAMES:
        return None
    kind = m.group(1) if " " in m.group(1) and is_proper(m.group(1)) else m.group(1).lower()  # "Maine Coon"
    name = _not_possessive(m.group(2))
    return f"pet:{name.lower()}", f"User has a {kind} named {name}"


def diet_fact(m):
    diet = m.group(1).lower()
    if diet not in DIETS:
        return None
    return "diet", f"User is {diet}"


def age_fact(m):
    return "age", f"User is {m.group(1)} years old"


def origin_word_fact(m):
    """ "Wrocław born and bred", "a Madurai boy at heart": a place, not a nationality or a common word."""
    place = clean_place(m.group(1))
    if place.split()[0].lower() in NATIONALITIES | NOT_INTRO | LOWER_STOP | NOT_NAMES:
        return None
    return "origin", f"User is from {place}"


# Relatives and pets named in another language ("meu marido se chama Thiago", "meine Tochter heißt Greta").
FOREIGN_KIN = {
    "esposa": "wife",
    "esposo": "husband",
    "marido": "husband",
    "mujer": "wife",
    "mulher": "wife",
    "mari": "husband",
    "femme": "wife",
    "mann": "husband",
    "frau": "wife",
    "moglie": "wife",
    "hijo": "son",
    "hija": "daughter",
    "filho": "son",
    "filha": "daughter",
    "fils": "son",
    "fille": "daughter",
    "sohn": "son",
    "tochter": "daughter",
    "figlio": "son",
    "figlia": "daughter",
    "hermano": "brother",
    "hermana": "sister",
    "irmão": "brother",
    "irmã": "sister",
    "frère": "brother",
    "sœur": "sister",
    "soeur": "sister",
    "bruder": "brother",
    "schwester": "sister",
    "fratello": "brother",
    "sorella": "sister",
    "madre": "mother",
    "mãe": "mother",
    "mère": "mother",
    "mutter": "mother",
    "padre": "father",
    "pai": "father",
    "père": "father",
    "vater": "father",
    "novio": "boyfriend",
    "novia": "girlfriend",
    "namorado": "boyfriend",
    "namorada": "girlfriend",
    "freund": "boyfriend",
    "freundin": "girlfriend",
    "perro": "dog",
    "perra": "dog",
    "gato": "cat",
    "gata": "cat",
    "chien": "dog",
    "chienne": "dog",
    "chat": "cat",
    "hund": "dog",
    "katze": "cat",
    "cachorro": "dog",
    "cachorra": "dog",
    "cane": "dog",
    "gatto": "cat",
    # Dutch, and pets the lexicon lacked.
    "vrouw": "wife",
    "man": "husband",
    "zoon": "son",
    "dochter": "daughter",
    "broer": "brother",
    "zus": "sister",
    "moeder": "mother",
    "vader": "father",
    "hond": "dog",
    "kat": "cat",
    "papagaio": "parrot",
    "loro": "parrot",
    "perroquet": "parrot",
    "pappagallo": "parrot",
    "papagei": "parrot",
    "cão": "dog",
    "coelho": "rabbit",
    "conejo": "rabbit",
    "lapin": "rabbit",
    "kaninchen": "rabbit",
    "konijn": "rabbit",
}


def foreign_kin_fact(m):
    kind = FOREIGN_KIN.get(m.group(1).lower())
    if not kind:
        return None
    if kind in ("dog", "cat", "parrot", "rabbit"):
        return pet_fact(Groups(kind, m.group(2)))
    return relative_fact(Groups(kind, m.group(2)))


def foreign_place(build):
    return lambda m: (
        not OTHER_HEAD.search(m.string, 0, m.start())
        and not _POSTPOSED_OWNER.search(m.string[max(0, m.start() - 12) : m.start()])
        and build(m)
    )


# An Indonesian or Malay possessive comes after its noun: "Kakak saya tinggal di Bandung" (my sister lives…).
_POSTPOSED_OWNER = re.compile(
    r"(?i)\b(?:kakak|adik|ibu|ayah|bapak|suami|istri|anak|teman|pacar|abang|nenek|kakek)\s+$"
)


def _work_stay(text: str) -> bool:
    """`STAY_WORDS` in a work clause, but "on a farm", "on the ferries" are where the work is."""
    return any(
        not re.match(r"(?i:on)\s", s.group(0))
        or re.search(r"(?i:holiday|vacation|business|layover)", s.group(0))
        for s in STAY_WORDS.finditer(text)
    )


def work_place_fact(m, group: int = 1, scoped: bool = False):
    """`scoped`: only what follows the place up to the next comma can make it a stay ("an embryologist at
    the IVF unit in Leiria, nights this month" works there; "…in Leeds for the summer" does not live
    there)."""
    place = clean_place(m.group(group))
    words = place.split()
    if (
        _work_stay(m.string[m.start(group) :].split(",", 1)[0] if scoped else m.string)
        or words[0].lower() in NOT_PLACES | NATIONALITIES | LOWER_STOP | NOT_WORK_PLACES
        or any(w.lower() in NOT_PLACE_WORDS for w in words)
        or place.lower() in FIELDS.lower().split("|")
        or len(place) < 3
        or re.fullmatch(rf"(?i:{WHEN_WORDS})", words[0])
    ):  # "I started at Zalando in October"
        return None
    return "location", f"User lives in {place}"


def someone_else_before(m) -> bool:
    """Someone else named in the 40 characters before the cue, or a negation, doubt or past in its part of the
    clause."""
    head = m.string[max(0, m.start() - 40) : m.start()]
    part = head[max(head.rfind(","), head.rfind(";"), head.rfind("."), head.rfind("!")) + 1 :]
    return bool(
        OTHER_HEAD.search(m.string, max(0, m.start() - 300), m.start())
        or _OTHER_HEAD_ABROAD.search(head)
        or NOT_NOW.search(part)
        or _POSTPOSED_OWNER.search(head[-12:])
    )  # (a window, so that many cues in one message cost linear time)


_OTHER_HEAD_ABROAD = re.compile(
    r"(?i)(?<![\w'])(?:han|hun|hon|dere|sie|ele|ela|lui|lei|él|ella|elle|ona|ono|oni|hij|zij|dia|"
    r"beliau|onlar|hy|sy|wao|yeye|siya|sila|ayah|ibu|abang|kakak|adik|"
    r"(?:min|mitt|mine|mia|mio|mis|moja|mój|moj|moje|můj|muj|mé|mein|meine|meinem|meiner|minha|meu|"
    r"benim|ma|mon|mes|mijn|onze|nuestro|nuestra|nostro|nostra|vår|vårt|vores|naš|naša|nasz|nasza)\s+"
    r"(?!name\b|naam\b|nombre\b|nome\b|navn\b|namn\b|imię\b|jméno\b|ime\b|chiamo\b|llamo\b|chamo\b|piace\b|"
    r"gusta\b|encanta\b|appelle\b|dedico\b)[^\W\d_]+)(?![\w'])"
)


def is_job_part(part: str) -> bool:
    """ "barista", "UX designer at Vipps": a phrase of at most four words whose last is a job."""
    words = JOB_PART_TAIL.sub("", part).split()
    return (
        0 < len(words) <= 4
        and words[0].lower() not in DETERMINERS
        and is_job_phrase([w.lower().strip(".!") for w in words])
    )
