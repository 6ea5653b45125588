"""Text normalisation before any rule reads a message: chat spelling, one swapped or dropped letter in a
keyword, punctuation said aloud, titles, quoted first-person sentences taken out, and capitals given back to a
message written without them after the words that introduce a name, place or employer.
"""

from __future__ import annotations

import re

from .fragments import (
    ADJECTIVE_ENDINGS,
    CODE_SWITCH_GATE,
    DIETS,
    EMOJI,
    FOREIGN_LIVE,
    FOREIGN_LIVE_CUES,
    HONORIFIC,
    LIVE_CUES,
    NAME,
    PETS,
    RELATIVES,
    UPPER,
)
from .lexicons import (
    LOWER_STOP,
    NATIONALITIES,
    NOT_INTRO,
    NOT_LOWER_INTRO,
    NOT_LOWER_NAMES,
    NOT_NAMES,
    NOT_NAMES_ABROAD,
    is_job,
)

# Chat spelling: a lower-case "i", "im", "ive" and dropped apostrophes are the same first person.
_CHAT_FORMS = {
    "i": "I",
    "im": "I'm",
    "i'm": "I'm",
    "ive": "I've",
    "i've": "I've",
    "i'd": "I'd",
    "i'll": "I'll",
    "dont": "don't",
    "cant": "can't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "havent": "haven't",
    "wont": "won't",
    "arent": "aren't",
    "thats": "that's",
    "hav": "have",
    "u": "you",
    "n": "and",
    "pls": "please",
    "plz": "please",
    "yrs": "years",
    "wrk": "work",
    "wrking": "working",
    "ive'": "I've",
    "iam": "I am",
    "myname": "my name",
    "alergic": "allergic",
    "allergic": "allergic",
    "alergy": "allergy",
    "allergie": "allergy",
    "alergies": "allergies",
}
# One swapped pair of letters in a word the rules open with ("my nmae is", "I lvie in") is read as
# that word; a swap that spells another English word ("form" for "from") is left alone.
_KEYWORDS = (
    "name",
    "live",
    "living",
    "from",
    "work",
    "working",
    "moved",
    "called",
    "married",
    "allergic",
    "originally",
    "based",
    "husband",
    "wife",
    "daughter",
    "brother",
    "sister",
    "favorite",
    "favourite",
)
_REAL_WORDS = frozenset("form fro evil vile".split())
_TYPOS = {
    w[:i] + w[i + 1] + w[i] + w[i + 2 :]: w for w in _KEYWORDS for i in range(len(w) - 1) if w[i] != w[i + 1]
}
# One letter left out, not the first ("my nam is", "i liv in"), unless that spells a word ("bother", "move").
_DROPPED_LETTER_WORDS = frozenset("bother base move lie fro wok nae calle marred wor ive".split())
_TYPOS.update(
    {
        w[:i] + w[i + 1 :]: w
        for w in _KEYWORDS
        for i in range(1, len(w))
        if w[:i] + w[i + 1 :] not in _DROPPED_LETTER_WORDS and w[i - 1] != w[i]
    }
)
_TYPOS = {k: v for k, v in _TYPOS.items() if k not in _REAL_WORDS and k not in _KEYWORDS}
_CHAT_WORD = re.compile(r"(?<![\w'])[A-Za-z][a-z']{0,11}(?![\w'])")


def _chat_word(m: re.Match) -> str:
    word = m.group(0)
    lowered = word.lower()
    if lowered in _CHAT_FORMS and (word.islower() or lowered in ("im", "ive")):
        return _CHAT_FORMS[lowered]
    if word.islower() and lowered in _TYPOS:
        return _TYPOS[lowered]
    return word


# A quoted first-person sentence is someone's words to translate, rewrite or report, never a
# statement: "Rewrite: 'I live in Turin and I'm a chef.'" Bounded, so each quote mark is looked
# past at most 300 characters (linear time). A single quote opens after a non-letter and before a
# letter, and closes after a letter or sentence mark: the apostrophe of "I'm" does neither.
_QUOTED = re.compile(
    r"\"[^\"\n]{1,300}\"|(?<![\w'])'(?=[^\W\d_])[^\n']{0,300}(?:'(?=\w)[^\n']{0,300}){0,3}(?<=[\w.!?,])'(?![\w'])"
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|My|we|We|our|Our)\b|\bme\b")


def _unquote(m: re.Match) -> str:
    return "(a quote)" if _FIRST_PERSON.search(m.group(0)) else m.group(0)


_CAP_RELATIVES = "|".join(r for r in RELATIVES.split("|") if r.isalpha())
_CAP_CUE = re.compile(
    r"\b(?:(?:live|living|lives|based|settled|stay|staying|reside|residing|born|raised|grew\s+up|moved|"
    r"relocated|relocating|moving)\s+(?:back\s+)?(?:in|to|out\s+of|near|outside)|(?:am|i'm|im|originally|come|"
    r"hail)\s+from|(?:work|working|worked|employed|job|interning)\s+(?:at|for|with|by)|(?<=[a-z])\s+(at|for|with|in|near|outside)|"
    r"my\s+name\s+is|call\s+me|calls\s+me|(?:i'm|i\s+am)\s+called|go\s+by|named|called|(?:my|our)\s+(?:"
    + _CAP_RELATIVES
    + r"|"
    + PETS
    + r")(?:\s+is)?)"
    r"\s+(?:the\s+)?(?=[^\W\d_])"
)
_CAP_WORD = re.compile(r"[^\W\d_][\w'\-]{0,30}")


def _capitalisable(word: str, place: bool) -> bool:
    lowered = word.lower()
    if lowered in LOWER_STOP or lowered in NOT_NAMES or is_job(lowered) or lowered in NATIONALITIES:
        return False
    return not lowered.endswith(("ing", "ly", "ed") if place else ("ing", "ly", "ed", "s"))


def _recapitalise(text: str) -> str:
    """`LOWER_STOP`'s note: capitals back after the words that introduce a name, place or employer."""
    out, last = [], 0
    for m in _CAP_CUE.finditer(text):
        if m.start() < last:
            continue
        before = text[max(0, m.start() - 40) : m.start()].split()  # bounded: linear in the message
        if m.group(1) and not (before and is_job(before[-1])):
            # "at" / "for" / "with" introduce an employer only after a job noun ("an engineer at volvo")
            continue
        cue = m.group(0).lower()
        place = not re.match(r"(?:my|our)\s", cue)
        pos, words = m.end(), 0
        while (
            words < (2 if place else 1)
            and (w := _CAP_WORD.match(text, pos))
            and _capitalisable(w.group(0), place)
        ):
            out.append(text[last : w.start()] + w.group(0)[:1].upper() + w.group(0)[1:])
            last, words = w.end(), words + 1
            if not (gap := re.match(r" (?=[^\W\d_])", text[last : last + 2])):
                break
            pos = last + gap.end()
    return "".join(out) + text[last:]


# Chat tags at the end of a clause say nothing about it: "I'm vegan btw", "my names Tavita lol".
# Linear time: the run of spaces or commas before the tag is taken from its start, possessively.
_CHAT_TAIL = re.compile(
    r"(?<![,\s])[,\s]++(?i:btw|by\s+the\s+way|tbh|lol|lmao|haha+|fyi|fwiw|imo|imho|ngl)(?=\s*+(?:$|[.,!?;\n]))"
)
_BASED_OUT_OF = re.compile(r"(?<![\w'])based\s++out\s++of(?=\s)")
_WITH = re.compile(r"(?<![\w/])w/\s*+(?=\w)")  # "obsessed w/ kimchi"
# Punctuation said aloud in dictation ("my name is Ugochi comma I live in Nsukka full stop"), not
# after a word that makes it a noun ("a comma", "the full stop"); a title's full stop ("Dr. Rahel", "St.
# Albans").
_SPOKEN_MARK = re.compile(
    r"(?<=[^\W\d_])(\s++)((?i:comma|full\s+stop|question\s+mark|exclamation\s+(?:mark|point)))(?![\w'])"
)
_SPOKEN = {
    "comma": ",",
    "full stop": ".",
    "question mark": "?",
    "exclamation mark": "!",
    "exclamation point": "!",
}
_NOT_BEFORE_MARK = frozenset(
    "a an the this that one no any every each my your his her its our their missing extra".split()
)
_TITLE_STOP = re.compile(r"\b(Mr|Mrs|Ms|Mx|Dr|Prof|St|Mt|Sra|Srta|Mme|Mlle)\.(?=\s+" + UPPER + ")")
_HONORIFIC_WORD = re.compile(r"\b(?:" + HONORIFIC[3:-1] + r"|St|Mt)\b")
_TITLE_CASE = re.compile(
    UPPER + r"(?=[^\W\d_])(?!" + UPPER + ")"
)  # a capital before a small letter ("Oslo", not "IST" or "I'm")
_ACRONYM = re.compile(r"(?<![^\W\d_])" + UPPER + r"{2,}+(?![^\W\d_])")  # "IST", "NHS"
# "I'm Dr. Tomás Ferreira", "this is Mrs Okafor": the title is dropped where the user names themselves.
_SELF_TITLE = re.compile(r"\b((?:I'm|I\s+am)\s+)" + HONORIFIC + r"\.?\s+(?=" + UPPER + ")")


def _spoken_mark(m: re.Match) -> str:
    before = m.string[max(0, m.start() - 20) : m.start()].split()  # bounded: linear in the message
    if before and before[-1].lower() in _NOT_BEFORE_MARK:
        return m.group(0)
    return _SPOKEN[" ".join(m.group(2).lower().split())]


_I_M = re.compile(r"(?<![\w'])[Ii] m(?![\w'])")
# A pet introduced by its name and its species' emoji ("meet Bantay 🐶") reads as "meet Bantay (my dog)".
PET_EMOJI = {
    "🐶": "dog",
    "🐕": "dog",
    "🐩": "dog",
    "🐱": "cat",
    "🐈": "cat",
    "🐰": "rabbit",
    "🐇": "rabbit",
    "🐹": "hamster",
    "🐦": "bird",
    "🦜": "parrot",
    "🐠": "fish",
    "🐟": "fish",
    "🐢": "turtle",
    "🐴": "horse",
    "🐎": "horse",
    "🐍": "snake",
    "🦎": "lizard",
    "🐷": "pig",
    "🐖": "pig",
    "🐭": "mouse",
    "🐁": "mouse",
    "🦔": "hedgehog",
    "🐔": "chicken",
    "🐓": "chicken",
    "🦆": "duck",
    "🐐": "goat",
    "🐀": "rat",
    "🐿": "squirrel",
}
_PET_EMOJI_ANY = re.compile("[" + "".join(PET_EMOJI) + "]")
_PET_EMOJI_AFTER = re.compile(
    r"((?i:meet|say\s+hi\s+to|introducing)\s+" + NAME + r")\s*+([" + "".join(PET_EMOJI) + "])"
)
_SOMEONE_ELSES = re.compile(r"(?i:\b(?:his|her|their|he|she|they)\b|[^\W\d_]'s\s)")


def _pet_emoji(m: re.Match) -> str:
    return f"{m.group(1)} (my {PET_EMOJI[m.group(3)]})"


# A message shouted in capitals ("HI IM DAVE I LIVE IN LEEDS") is read as a lower-case one, and
# a user who types in lower case names themselves in lower case too, in a message with capitals elsewhere ("hi
# im nurul, kerja di Tokopedia"): after "im" / "my name is" / "call me", one word gets its capital back when
# it ends the clause or is followed by "and", "from", "here", "i"…, and is no common word, state or adjective.
_SHOUT_MIN_LETTERS = 6
_CAP_NAME_CUE = re.compile(
    r"(?<![\w'])(?:(i'm|im|i\s+am|iam)|my\s+name\s+is|my\s+names|my\s+name's|name's|call\s+me)\s+(?=[a-z])"
)
_CAP_PLACE_CUE = re.compile(
    r"(?<![^\W\d_])(?:" + LIVE_CUES + "|" + FOREIGN_LIVE_CUES + "|" + FOREIGN_LIVE + r")\s+(?=[a-z])"
)
_CAP_NAME_END = re.compile(
    r"(?:\s*+(?:$|[,.!;:)\n])|\s++(?:and|from|here|i|im|i'm|nice|btw|lol|but|n|&|,|from|living|based|"
    r"originally|live|work|working|\d))"
)


def _lower_intro_ok(word: str) -> bool:
    lowered = word.lower()
    return not (
        lowered in NOT_LOWER_INTRO
        or lowered in NOT_INTRO
        or lowered in NOT_LOWER_NAMES
        or lowered in DIETS
        or not _capitalisable(word, True)
        or lowered.endswith(ADJECTIVE_ENDINGS + ("able", "ible", "y"))
    )  # ("Jess", "Lukas")


def _recapitalise_names(text: str) -> str:
    """A lower-case name after a lower-case intro, in any message; and a lower-case place
    after a cue of another language for "I live in" ("tinggal di bandung")."""
    out, last = [], 0
    if CODE_SWITCH_GATE.search(text):  # (a cue of another language is there: the place cues are read too)
        for m in _CAP_PLACE_CUE.finditer(text):
            if (
                m.start() >= last
                and (w := _CAP_WORD.match(text, m.end()))
                and w.group(0).islower()
                and _capitalisable(w.group(0), True)
                and w.group(0) not in NOT_NAMES_ABROAD
            ):
                out.append(text[last : w.start()] + w.group(0)[:1].upper() + w.group(0)[1:])
                last = w.end()
        text, out, last = "".join(out) + text[last:], [], 0
    for m in _CAP_NAME_CUE.finditer(text):
        if m.start() < last or not (w := _CAP_WORD.match(text, m.end())) or not w.group(0).islower():
            continue
        if not _lower_intro_ok(w.group(0)) or (m.group(1) and not _CAP_NAME_END.match(text, w.end())):
            continue
        out.append(text[last : w.start()] + w.group(0)[:1].upper() + w.group(0)[1:])
        last = w.end()
    return "".join(out) + text[last:]


_REPEATED_VERB = re.compile(r"(?i)\b(love|like|hate)(?:[\s,!]++\1\b)++")


def normalize(text: str) -> str:
    """Curly quotes made straight, chat spelling made standard (see `_CHAT_FORMS`, `_TYPOS`), chat
    tags dropped, a message written all in lower case given its capitals back after the words that
    introduce a name, a place or an employer (`_recapitalise`), and quoted first-person sentences
    taken out."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    if " comma" in text or "stop" in text or " mark" in text:
        text = _SPOKEN_MARK.sub(_spoken_mark, text)
    if _HONORIFIC_WORD.search(text):
        text = _SELF_TITLE.sub(r"\1", _TITLE_STOP.sub(r"\1", text) if "." in text else text)
    if text.isupper() and sum(c.isalpha() for c in text[:200]) >= _SHOUT_MIN_LETTERS:
        text = text.lower()  # "HI IM DAVE I LIVE IN LEEDS"
    if text.islower() or (not _TITLE_CASE.search(text) and _ACRONYM.sub("", text).islower()):
        # no capital letter but in acronyms ("i live in kochi so use IST")
        text = _recapitalise(text)
    text = _recapitalise_names(text)
    if _PET_EMOJI_ANY.search(text) and not _SOMEONE_ELSES.search(text):
        text = _PET_EMOJI_AFTER.sub(_pet_emoji, text)
    text = EMOJI.sub(". ", text)
    if "love love" in text.lower() or "like like" in text.lower():
        text = _REPEATED_VERB.sub(r"\1", text)  # "love love love dim sum"
    text = _CHAT_TAIL.sub("", text)
    if "out of" in text:
        text = _BASED_OUT_OF.sub("based in", text)  # "based out of Ludlow"
    if "w/" in text:
        text = _WITH.sub("with ", text)
    if " m" in text:
        text = _I_M.sub("I'm", text)
    return _QUOTED.sub(_unquote, _CHAT_WORD.sub(_chat_word, text))
