"""Rules that extract where the user lives (`location`) and where they come from (`origin`), in English and in
the languages users code-switch into.

One module because the package keeps one module per slot: `location` and `origin` share their cue
lists and place guards. Most of its length is rule tables, not logic.
"""

from __future__ import annotations

import re

from .fragments import (
    FIELDS,
    FOREIGN_LIVE,
    FOREIGN_LIVE_CUES,
    LIVE_CUES,
    NO_VALUE,
    NOT_LETTER_BEFORE,
    NOT_NOW,
    PLACE,
    PLACE_NC,
    STAY_WORDS,
    UPPER,
    WORD_CHARS,
)
from .lexicons import LOWER_STOP, NATIONALITIES, NOT_JOB_MODIFIERS, NOT_PLACES, is_job
from .rule import Apposition, Groups, Rule
from .values import (
    clean_place,
    foreign_place,
    location_fact,
    origin_fact,
    origin_word_fact,
    someone_else_before,
    work_place_fact,
)

# The subject of a place verb: "I" or "we", with an adverb or two ("we've just moved to …").
_PLACE_VERB_SUBJECT = (
    r"(?i:I|we)(?:'ve|\s+have)?\s+(?:(?i:just|recently|finally|now|since|already|officially)\s+)?"
)


def _job_in_place(m):
    """ "I'm a pastry chef in Ljubljana": where the user works is where they live ("in Year 6" is no
    place)."""
    head = m.group(1).split()
    if not is_job(head[-1]) or any(w.lower() in NOT_JOB_MODIFIERS for w in head[:-1]):
        return None
    place = clean_place(m.group(2))
    if place.split()[0].lower() in NOT_PLACES or place.lower() in FIELDS.lower().split("|") or len(place) < 3:
        return None
    return "location", f"User lives in {place}"


def _origin_word_location(m):
    """ "I'm Berlin-based": where the user lives."""
    built = origin_word_fact(m)
    return built and ("location", f"User lives in {clean_place(m.group(1))}")


def _field_place(m):
    return (
        None
        if NO_VALUE.match(m.group(1)) or m.group(1).split()[0].lower() in NOT_PLACES
        else location_fact(m)
    )


def _field_origin(m):
    return (
        None if NO_VALUE.match(m.group(1)) or m.group(1).split()[0].lower() in NOT_PLACES else origin_fact(m)
    )


def _home_is(m):
    place = clean_place(m.group(1))
    if place.split()[0].lower() in NOT_PLACES or len(place) < 3:
        return None
    return "location", f"User lives in {place}"


def _origin_living(m):
    """ "I'm a Lagos girl living in Leeds": where the user is from, and where they live."""
    built = origin_word_fact(m)
    return built and [built, ("location", f"User lives in {clean_place(m.group(2))}")]


def _in_place(m):
    """ "I'm in Trujillo, close to the coast", "we're out in Invercargill and it rains sideways": a home,
    unless the rest of the sentence says it is a stay."""
    if STAY_WORDS.search(m.string, m.end(1)):
        return None
    place = clean_place(m.group(1))
    if place.split()[0].lower() in NOT_PLACES | NATIONALITIES | LOWER_STOP or len(place) < 3:
        return None
    return "location", f"User lives in {place}"


def _origin_near(m):
    return origin_word_fact(m)


_FOREIGN_FROM_CUES = (
    r"(?i:(?:tôi\s+|mình\s+)?đến\s+từ|(?:mimi\s+)?ninatoka|natoka|lumaki\s+ako\s+sa|ipinanganak\s+ako\s+sa|"
    r"taga|ég\s+er\s+frá|eg\s+er\s+fra|ég\s+er\s+fædd(?:ur)?\s+(?:í|á)|dw\s+i'n\s+dod\s+o|dwi'n\s+dod\s+o|"
    r"rwy'n\s+dod\s+o|jeg\s+er\s+fra|jeg\s+kommer\s+fra|jag\s+kommer\s+från|jag\s+är\s+från|pochodzę\s+z|pochodze\s+z|"
    r"jestem\s+ze|jsem\s+z|saya\s+(?:berasal\s+)?dari|eu\s+sou\s+de|sou\s+d[ao]|vengo\s+dalla|sono\s+originari[oa]\s+di)"
)
_WORK_VERB_SUBJECT = (
    r"(?i:I)\s+(?:(?i:work|fix|repair|service|drive|teach|study|manage|run|own|farm|nurse|tutor|"
    r"guide|coach|translate)\s+(?:(?:an?|the|at|for|as|my|our)\s+)?(?:[\w\-']+\s+){0,4}?)"
)


def _location_too(m):
    return location_fact(m)


_LIVE_IN_CUES = r"(?i:(?:ik\s+)?woon\s+in|sakin(?:a)?\s+fi|sakna\s+fi|ana\s+sakin\s+fi)"
_FROM_CUES = r"(?i:ana\s+min|ik\s+kom\s+uit)"  # not Finnish: its places are inflected ("Suomesta")
# The place first, the cue after: "Sapporo ni sunde imasu", "Lucknow mein rehte hain", "Aomori shusshin",
# "Indore se hoon".
_LIVE_AFTER_PLACE = (
    r"\s+(?i:ni\s+sunde\s+(?:imasu|iru|masu)|(?:mein|me)\s+(?:rehta|rehti|rehte)\s+(?:hoon|hun|hu|hain))\b"
)
_FROM_AFTER_PLACE = r"\s+(?i:shusshin|se\s+(?:hoon|hun|hu|hain))\b"


def _island(m):
    if re.search(
        r"(?i)\b(?:street|road|avenue|lane|drive|close|way|crescent|terrace|place|boulevard|st|rd|ave)$",
        m.group(1),
    ):
        return None
    return (
        None
        if m.group(1).lower() in ("mars", "venus", "jupiter", "saturn", "pluto", "earth", "the moon")
        else location_fact(m)
    )


def _own_place(build):
    return lambda m: not someone_else_before(m) and build(m)


# A verb of the first person plural says the user lives there too: "mi esposo Joaquín y yo vivimos en Paraná".
_WE_FORM = re.compile(
    r"(?i)(?:vivimos|radicamos|residimos|moramos|vivemos|vivim|nous|on|abitiamo|viviamo|wir|wohnen|leben|we|"
    r"wij|ons|vi|mieszkamy|bydlíme|bydlime|živimo|zivimo|locuim|kami|garim)\b"
)


def _live_abroad(m):
    if _WE_FORM.match(m.group(0)) or re.match(r"(?i)\S+\s+(?:wonen|bor)\b", m.group(0)):
        head = m.string[max(0, m.start() - 40) : m.start()]
        if NOT_NOW.search(
            head[max(head.rfind(","), head.rfind(";"), head.rfind("."), head.rfind("!")) + 1 :]
        ):
            return None
        return location_fact(m)
    return not someone_else_before(m) and location_fact(m)


def _hungarian_place(m):
    place = m.group(1)
    return not someone_else_before(m) and ("location", f"User lives in {place}")


def _origin_nationality(m):
    return "origin", f"User is {m.group(1)}"


def _for_uni(m):
    return location_fact(Groups(m.group(1)))


# "originally from Heraklion, been in Norwich for 20 years now": the second place is the home (before the
# origin rule, which ends the clause's rules).
LOCATION_AFTER_ORIGIN = Rule(
    r"(?:(?i:originally)\s+)?(?i:from)\s+"
    + PLACE_NC
    + r",\s+(?:(?i:but|and)\s+)?(?:(?i:I've|I\s+have)\s+)?(?:(?i:now)\s+)?"
    r"(?i:been)\s+(?:(?i:living|based)\s+)?(?i:in)\s+" + PLACE + r"\s+(?i:for|since)\b",
    _location_too,
    0.75,
    slot="location",
    alone=False,
)
# Work clauses that say where (see work_place_fact): tried first, as the employer rules end the
# clause's rules.
WORK_PLACE = Rule(
    _WORK_VERB_SUBJECT
    + r"(?i:in|near|outside|outside\s+of)\s+"
    + PLACE
    + r"(?=\s*(?:$|[,.!;\-–—(])|\s+(?i:and|but|now|so|these\s+days|since|yes|lol|haha)\b)",
    work_place_fact,
    0.75,
    slot="location",
    alone=False,
)
ORIGIN_NATIVE_NOW_LIVING = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+"
    + PLACE
    + r"\s+(?i:boy|girl|lad|lass|native|guy|gal)\s+(?:(?i:now)\s+)?(?i:living|based)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _origin_living,
    0.75,
    slot="origin",
    alone=True,
)
LOCATION_CALLED_HOME = Rule(
    r"(?i:I\s+(?:now\s+)?call)\s+" + PLACE + r"\s+(?i:home)\b",
    location_fact,
    0.85,
    slot="location",
    alone=True,
)
LOCATION_IS_MY_HOME = Rule(
    PLACE + r"\s+(?i:is\s+(?:now\s+)?(?:my\s+|our\s+)?home)(?:\s+(?i:now|these\s+days))?\s*(?:$|[,.!;])",
    location_fact,
    0.85,
    slot="location",
    alone=True,
)
LOCATION_IN_THESE_DAYS = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:in)\s+" + PLACE + r"\s+(?i:these\s+days|nowadays)\b",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_IN_NOW_AFTER_MOVE = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:in)\s+" + PLACE + r"\s+(?i:now)\s*(?:$|[.!;])",
    location_fact,
    0.8,
    needs=r"(?i)\b(?:any\s?more|no\s+longer|moved|relocated|used\s+to\s+live|lived)\b",
    slot="location",
    alone=True,
)
LOCATION_DWELLING_IN = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are|I\s+live|we\s+live)\s+(?i:in)\s+(?i:an?|our|my)\s+(?:[a-z]+\s+){0,2}?"
    r"(?i:flat|apartment|house|studio|place|bungalow|cottage|condo|bedsit|houseboat|room)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_BOUGHT_OR_RENTED_HOME = Rule(
    r"(?i:(?:I|we)\s+(?:just\s+|recently\s+|finally\s+)?(?:bought|rent|rented|own|found)|(?:I've|we've)\s+(?:just\s+)?(?:bought|rented|found))"
    r"\s+(?i:an?|our|my)\s+(?i:(?:new\s+|little\s+|small\s+)?(?:house|flat|apartment|place|home|condo|cottage))\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_NEAR_OR_PART_OF = Rule(
    r"(?i:I\s+live\s+(?:just\s+)?(?:outside(?:\s+of)?|near)|"
    r"I\s+live\s+(?:in|on)\s+the\s+(?:suburbs|outskirts|edge|centre|center|north|south|east|west|middle)\s+of|"
    r"I\s+live\s+in\s+(?:downtown|central|north|south|east|west|northern|southern|eastern|western|rural|suburban|greater)|"
    r"(?:I\s+live|I'm\s+living|I\s+am\s+living|we\s+live)\s+with\s+(?:my|our|a|two|three)\s+(?:[\w\-]+\s+){0,3}?in|"
    r"I\s+live\s+in\s+an?\s+(?:[a-z]+\s+)?(?:town|village|city|suburb|place)\s+(?:near|outside(?:\s+of)?|close\s+to|"
    r"(?:just\s+)?(?:north|south|east|west)\s+of)|"
    r"(?:I|we)\s+live\s+(?:up|down|out|over|back)\s+in|I\s+live\s+in|I\s+live\s+at(?=\s+"
    + UPPER
    + r")|I'm\s+living\s+in|I\s+am\s+living\s+in|I'm\s+based\s+in|I\s+am\s+based\s+in|"
    r"I\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?to|I've\s+(?:just\s+)?moved\s+to|"
    r"I\s+have\s+(?:just\s+)?moved\s+to|I\s+now\s+live\s+in|we\s+(?:now\s+)?live\s+in|home\s+is|"
    r"I\s+reside\s+in|I'm\s+(?:now\s+)?(?:located|settled)\s+in|I\s+am\s+(?:now\s+)?(?:located|settled)\s+in|"
    r"I'm\s+based\s+out\s+of|I\s+am\s+based\s+out\s+of|we're\s+based\s+(?:in|out\s+of)|we\s+are\s+based\s+(?:in|out\s+of)|"
    r"we\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:over\s+|back\s+)?to|"
    r"we've\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to|we\s+have\s+(?:just\s+)?(?:moved|relocated)\s+to|"
    r"I've\s+(?:just\s+|recently\s+)?relocated\s+to|I(?:'ve|\s+have)\s+(?:been\s+living|lived)\s+in|"
    r"home\s+for\s+(?:me|us)\s+is|my\s+home\s+is\s+in|(?:our|my)\s+family\s+lives\s+in|"
    r"I'm\s+at\s+home\s+in|(?:we're|we\s+are)\s+(?:now\s+)?(?:based|living|located|settled)\s+in|"
    r"I\s+(?:finally\s+|eventually\s+)?settled\s+(?:down\s+)?in|"
    r"(?:I|we)\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:away\s+)?from\s+"
    + PLACE_NC
    + r"\s+to)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.9,
    slot="location",
    alone=True,
)
# Without a subject only as a whole sentence: "Living in Denver these days." (not "Living in Rome is fun").
LOCATION_LIVING_IN_SENTENCE = Rule(
    r"(?i:(?:now\s+)?(?:living|based)\s+in)\s+"
    + PLACE
    + r"(?:\s+(?i:these\s+days|nowadays|now|at\s+the\s+moment|for\s+now))?\s*[.!]?$",
    location_fact,
    0.85,
    slot="location",
    alone=True,
)
LOCATION_CURRENTLY = Rule(
    r"(?i:currently|now|still)\s+(?i:living|based)\s+in\s+" + PLACE + r"(?=$|[\s,.!;])",
    location_fact,
    0.85,
    slot="location",
    alone=True,
)
ORIGIN_FROM_OR_GREW_UP = Rule(
    r"(?i:I'm\s+(?:originally\s+)?from|I\s+am\s+(?:originally\s+)?from|I\s+come\s+from|(?:we're|we\s+are)\s+(?:originally\s+)?from|"
    r"I\s+grew\s+up\s+in\s+an?\s+(?:[a-z]+\s+)?(?:town|village|city|suburb|place)\s+(?:near|outside(?:\s+of)?|close\s+to|"
    r"(?:just\s+)?(?:north|south|east|west)\s+of)|"
    r"I\s+grew\s+up\s+(?:in|(?:just\s+)?(?:outside(?:\s+of)?|near))|I\s+was\s+born\s+(?:and\s+(?:raised|bred)\s+)?in|originally\s+from|"
    r"I\s+was\s+(?:raised|brought\s+up)\s+in|I\s+hail\s+from|(?:I'm|I\s+am)\s+(?:a\s+)?native\s+of)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    origin_fact,
    0.85,
    slot="origin",
    alone=True,
)
ORIGIN_PLACE_FIRST = Rule(
    PLACE + r"\s+(?i:is\s+where\s+I\s+(?:grew\s+up|was\s+born|was\s+raised|come\s+from)|is\s+my\s+hometown)"
    r"\s*(?:$|[,.!;])",
    origin_fact,
    0.85,
    slot="origin",
    alone=True,
)
ORIGIN_HOMETOWN = Rule(
    r"(?i:my\s+hometown\s+is|my\s+home\s+town\s+is)\s+" + PLACE + r"(?=$|[\s,.!;])",
    origin_fact,
    0.85,
    slot="origin",
    alone=True,
)
ORIGIN_BORN_AND_RAISED = Rule(
    r"(?i:born\s+and\s+(?:raised|bred)\s+in|born\s+in|raised\s+in|grew\s+up\s+in|brought\s+up\s+in)\s+"
    + PLACE
    + r"\s*(?:[.!]?$|,)",
    origin_fact,
    0.8,
    slot="origin",
    alone=True,
)
LOCATION_MOVED_TO = Rule(
    _PLACE_VERB_SUBJECT
    + r"(?i:moved|relocated|settled)\s+(?:(?i:over|back|down|away|here|out|up)\s+)?(?:(?i:from)\s+"
    + PLACE_NC
    + r"\s+)?(?i:to|in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.85,
    slot="location",
    alone=True,
)
LOCATION_STAY_OR_RESIDE = Rule(
    r"(?i:I|we)\s+(?i:stay|reside)\s+(?i:in|at)\s+" + PLACE + r"(?=$|[\s,.!;])",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
# "I'm staying in Ahmedabad only" (not "staying at the Hilton in Abuja tonight": a stay, not a home).
LOCATION_STAYING_IN = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:staying|residing)\s+(?i:in|at)\s+(?!(?i:the)\s)"
    + PLACE
    + r"(?:\s+(?i:only|now|permanently|these\s+days|nowadays|with\s+(?:my|our)\s+(?:family|parents|husband|"
    r"wife|kids)))?\s*(?:$|[,.!;])",
    location_fact,
    0.75,
    slot="location",
    alone=True,
)
LOCATION_RESIDING_FOR_A_TIME = Rule(
    r"(?:(?i:currently|now|still|presently)\s+(?i:residing|based|living|staying)|(?i:residing|based|living))\s+(?i:in|at|out\s+of)\s+"
    + PLACE
    + r"(?:\s+(?i:at\s+the\s+moment|these\s+days|nowadays|now|for\s+now|currently|with\s+(?:my|our)\s+\w+|"
    r"since\s+\d{4}|for\s+(?:\d{1,2}|a\s+few|several|many|two|three|four|five|six|seven|eight|nine|ten)\s+(?:years?|months?)"
    r"(?:\s+now)?))?(?=\s*(?:$|[,.!;]))",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_OF_MY_HOME = Rule(
    r"(?i:my|our)\s+(?i:flat|house|apartment|home|place|condo|bungalow|cottage)(?:\s+is|'s)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_LIVED_IN_SINCE = Rule(
    r"(?i:I've|I\s+have|we've|we\s+have)\s+been\s+(?:(?i:living|based)\s+)?(?i:in)\s+"
    + PLACE
    + r"\s+(?i:since|for\s+(?:\d{1,2}|a\s+few|"
    r"several|many|two|three|four|five|six|seven|eight|nine|ten|over\s+\S+|almost\s+\S+|nearly\s+\S+)\s+years?)\b",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
JOB_IN_PLACE = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:currently|now|still|also|actually)\s+)?(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _job_in_place,
    0.75,
    slot="location",
    alone=True,
)
ORIGIN_GREW_UP_NEAR = Rule(
    r"(?:(?i:I)\s+)?(?i:grew\s+up|was\s+born|was\s+raised|born|raised)\s+(?i:in|on)\s+(?i:an?)\s+(?:[\w\-]+\s+){0,3}?"
    r"(?i:outside(?:\s+of)?|near|in|close\s+to|(?:north|south|east|west)\s+of)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    origin_fact,
    0.8,
    slot="origin",
    alone=True,
)
ORIGIN_PLACE_BORN = Rule(
    PLACE + r"(?:\s+|-)(?i:born)(?:\s+(?i:and)\s+(?i:bred|raised))?(?=\s*(?:$|[,.!;]))",
    origin_word_fact,
    0.75,
    slot="origin",
    alone=True,
)
ORIGIN_NATIVE = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+" + PLACE + r"\s+(?i:boy|girl|lad|lass|native|guy|gal)\b",
    origin_word_fact,
    0.75,
    slot="origin",
    alone=True,
)
LOCATION_PLACE_BASED = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?:(?i:an?)\s+)?("
    + UPPER
    + WORD_CHARS
    + r"{1,30}(?:\s+"
    + UPPER
    + WORD_CHARS
    + r"{1,30})?)(?:-(?i:based)\b|\s+(?i:based)\s*(?:$|[,.!;]))",
    _origin_word_location,
    0.75,
    slot="location",
    alone=True,
)
ORIGIN_FROM_BY_BIRTH = Rule(
    r"(?i:from)\s+" + PLACE + r"\s+(?i:originally|by\s+birth)\b", origin_fact, 0.8, slot="origin", alone=True
)
JOB_ABBREVIATION_IN_PLACE = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,2}(?:RN|GP|NP|EMT|CNA|LPN|HCA|CPA|SRE|MD))\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _job_in_place,
    0.75,
    slot="location",
    alone=True,
)
LOCATION_RESIDENT_OF = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+(?:"
    + PLACE
    + r"\s+(?i:resident)|(?i:resident)\s+(?i:of)\s+"
    + PLACE
    + r")(?=$|[\s,.!;])",
    lambda m: _field_place(Groups(m.group(1) or m.group(2))),
    0.75,
    slot="location",
    alone=True,
)
# A form's fields: "Location: Kumasi", "Occupation: pharmacist", "Employer: Dangote Group".
FIELD_LOCATION = Rule(
    r"(?i:location|city|town|home|residence|current\s+city|lives?\s+in|based\s+in)\s*:\s*"
    + PLACE
    + r"\s*(?:$|[,.!;])",
    _field_place,
    0.75,
    slot="location",
    alone=True,
)
FIELD_ORIGIN = Rule(
    r"(?i:hometown|home\s+town|origin|from|born\s+in|birthplace|place\s+of\s+birth)\s*:\s*"
    + PLACE
    + r"\s*(?:$|[,.!;])",
    _field_origin,
    0.75,
    slot="origin",
    alone=True,
)
# Places: "Ich wohne in Linz", "Home is a little village outside Gdańsk", "I'm a Kiwi living in Montréal".
LOCATION_FOREIGN_LIVE = Rule(
    FOREIGN_LIVE + r"\s+" + PLACE + r"(?=$|[\s,.!;])", location_fact, 0.8, slot="location", alone=True
)
HOME_IS = Rule(
    r"(?i:home\s+is|home's|home\s+for\s+me\s+is)\s+(?:(?i:a|an|the)\s+(?:[\w\-]+\s+){0,3}?(?i:outside(?:\s+of)?|near|in|"
    r"close\s+to|just\s+outside(?:\s+of)?|(?:north|south|east|west)\s+of)\s+)?"
    + PLACE
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:now|these\s+days|above|below|near|next\s+to|behind|opposite|"
    r"overlooking|by\s+the|with\s+(?:my|our|a|the))\b)",
    _home_is,
    0.8,
    slot="location",
    alone=True,
)
LOCATION_DESCRIBED_LIVING_IN = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+(?:[\w\-]+\s+){0,2}?(?i:living|based|residing)\s+(?i:in)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    location_fact,
    0.75,
    slot="location",
    alone=True,
)
# "from Sligo originally, now in Bordeaux": after a former place, "now in X" is where the user lives.
LOCATION_NOW_AFTER_FORMER = Rule(
    r"(?i:now)\s+(?:(?i:living|based)\s+)?(?i:in)\s+" + PLACE + r"\s*(?:$|[,.!;])",
    location_fact,
    0.75,
    needs=r"(?i)\b(?:originally|from|moved|grew\s+up|born|raised|left|used\s+to\s+live|lived)\b",
    slot="location",
    alone=True,
)
# Places: "I'm in Trujillo, close to the coast", "we're out in Invercargill and it rains", "I'm down in Hobart
# these days".
LOCATION_IN_BEFORE_MORE = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?:(?i:out|down|up|over|back)\s+)?(?i:in)\s+(?!(?i:the)\s)"
    + PLACE
    + r"(?=\s*,\s*\S|\s+(?i:and|where|so|but)\s|\s+(?i:these\s+days|nowadays)\b)",
    _in_place,
    0.7,
    slot="location",
    alone=True,
)
LOCATION_OUT_OR_DOWN_IN = Rule(
    r"(?i:I'm|I\s+am|we're|we\s+are)\s+(?i:out|down|up|over)\s+(?i:in)\s+(?!(?i:the)\s)"
    + PLACE
    + r"\s*(?:$|[.!;])",
    _in_place,
    0.7,
    slot="location",
    alone=True,
)
LOCATION_LIVED_IN_FOR_LONG = Rule(
    r"(?i:I've|I\s+have|we've|we\s+have)\s+been\s+(?:(?i:living|based)\s+)?(?i:in)\s+"
    + PLACE
    + r"\s+(?:(?i:for\s+work)\s+)?"
    r"(?i:for)\s+(?:(?i:a\s+long\s+time|ages|years|decades|a\s+decade|most\s+of\s+my\s+life|a\s+while\s+now|a\s+good\s+while|"
    r"(?:about|almost|nearly|over|around|roughly)\s+(?:\d{1,2}|a|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+years?))\b",
    location_fact,
    0.75,
    slot="location",
    alone=True,
)
# Origins: "originally Cebu, but…", "I come from a small village near Bitola".
ORIGIN_ORIGINALLY_PLACE = Rule(
    r"(?i:originally)[,:]?\s+(?!(?i:from)\b)" + PLACE + r"(?=\s*(?:$|[,;.!])|\s+(?i:but|and)\b)",
    lambda m: None if m.group(1).endswith("'s") else origin_word_fact(m),
    0.7,
    slot="origin",
    alone=True,
)
ORIGIN_SETTLEMENT_NEAR = Rule(
    r"(?i:I\s+come|I'm|I\s+am|we're|we\s+are|I\s+hail)\s+(?:(?i:originally)\s+)?(?i:from)\s+(?i:an?)\s+(?:[\w\-]+\s+){0,2}?"
    r"(?i:town|village|city|suburb|place|farm|hamlet|island|port|settlement|community)\s+(?i:near|outside(?:\s+of)?|close\s+to|"
    r"(?:just\s+)?(?:north|south|east|west)\s+of|in|on)\s+" + PLACE + r"(?=$|[\s,.!;])",
    _origin_near,
    0.8,
    slot="origin",
    alone=True,
)
ORIGIN_BORN_YEAR_IN = Rule(
    r"(?:(?i:I\s+was)\s+)?(?i:born)\s+(?i:in)\s+\d{4}\s+(?i:in)\s+" + PLACE + r"(?=$|[\s,.!;])",
    origin_fact,
    0.8,
    slot="origin",
    alone=True,
)
# "soy de Rosario", "I have a daughter, she's called Ife", "got a new kitten last week, named her Miso", "next
# month we fly to Hanoi".
ORIGIN_FOREIGN_FROM = Rule(
    r"(?i:soy\s+de|je\s+suis\s+(?:originaire\s+)?de|ich\s+bin\s+aus|ich\s+komme\s+aus|sou\s+de|vengo\s+de|venho\s+de|"
    r"sono\s+di|vengo\s+da|ik\s+kom\s+uit|jestem\s+z)\s+" + PLACE + r"(?=$|[\s,.!;])",
    origin_fact,
    0.8,
    slot="origin",
    alone=True,
)
# "I live on a boat in Amsterdam", "we live on a farm outside Ballarat".
LOCATION_DWELLING_NEAR = Rule(
    r"(?i:I|we)\s+(?i:live|lived\s+for\s+years)\s+(?i:on|in)\s+(?i:an?|the)\s+(?:[\w\-]+\s+){0,2}?(?i:boat|houseboat|narrowboat|farm|"
    r"flat|house|apartment|caravan|van|cottage|bungalow|studio|island|street|estate|ranch|commune|barge|croft|homestead|suburbs?|"
    r"outskirts|edge)\s+(?i:in|near|outside(?:\s+of)?|on|of|by)\s+" + PLACE + r"(?=$|[\s,.!;])",
    location_fact,
    0.8,
    slot="location",
    alone=True,
)
JOB_NEAR_PLACE = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)\s+(?i:near|outside|outside\s+of|just\s+outside)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _job_in_place,
    0.75,
    slot="location",
    alone=True,
)
# "Pokhara boy through and through": where the user is from, without "I'm a".
ORIGIN_NATIVE_AT_HEART = Rule(
    r"(?:(?i:an?)\s+)?"
    + PLACE
    + r"\s+(?i:boy|girl|lad|lass|native|guy|gal)\s+(?i:through\s+and\s+through|born\s+and\s+(?:bred|raised)|"
    r"at\s+heart)\b",
    origin_fact,
    0.75,
    slot="origin",
    alone=True,
)
# "My address changed: new flat in Třebíč", "our new house is in Ennis": the user's new home.
LOCATION_NEW_HOME = Rule(
    r"(?:(?i:my|our)\s+)?(?i:new)\s+(?i:flat|house|apartment|place|home|address|digs)\s+(?:(?i:is)\s+)?(?i:in)\s+"
    + PLACE
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:near|by|above|next|with|now|since)\b)",
    location_fact,
    0.75,
    slot="location",
    alone=True,
)
# "I live on Inis Mór": an island, not a street.
ISLAND = Rule(
    r"(?i:I|we)\s+(?i:live)\s+(?i:on)\s+(?=" + UPPER + r")" + PLACE + r"(?=$|[\s,.!;])",
    _island,
    0.8,
    slot="location",
    alone=True,
)
# Place first, the cue after: "Busan-e sarayo", "Gangneung saram-ieyo" (Korean), "Miren naiz", "Anna vagyok".
LOCATION_KOREAN_CUE_AFTER = Rule(
    PLACE + r"-?(?i:e|eseo|ae)\s+(?i:sarayo|salayo|sal-ayo|salgo\s+isseoyo|salgo\s+iseoyo|sara|sarayo)\b",
    _own_place(location_fact),
    0.8,
    slot="location",
    alone=True,
)
ORIGIN_KOREAN_CUE_AFTER = Rule(
    PLACE + r"\s+(?i:saram|saram-ieyo|saramieyo|saram-imnida|saramimnida|sarami|saram-iyeyo)\b",
    _own_place(origin_fact),
    0.8,
    slot="location",
    alone=True,
)
# "Used to live in Ulsan, now back home in Gwangju": the second place is home.
LOCATION_NOW_AFTER_USED_TO = Rule(
    r"(?:(?i:I|we)\s+)?(?i:used\s+to\s+live|lived)\s+(?i:in)\s+"
    + PLACE_NC
    + r"\s*+,?\s+(?:(?i:but|and)\s+)?(?i:now)\s+"
    r"(?:(?i:I'm|I\s+am|we're|we\s+are|I\s+live|we\s+live)\s+)?(?:(?i:back\s+home|back|home|living|based|settled|moved\s+back)\s+)?"
    r"(?i:in|to)\s+" + PLACE + r"(?=$|[\s,.!;])",
    location_fact,
    0.75,
    slot="location",
    alone=True,
)
# "I'm in Loughborough for uni", "I'm in Leeds for my masters": a student's home.
LOCATION_FOR_STUDIES = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:now|currently|still)\s+)?(?i:in)\s+"
    + PLACE
    + r"\s+(?i:for)\s+(?:(?i:my)\s+)?(?i:uni|university|college|"
    r"school|studies|degree|masters|master's|phd|undergrad|grad\s+school|med\s+school|law\s+school|residency)\b",
    _for_uni,
    0.75,
    slot="location",
    alone=True,
)
LOCATION_FOREIGN_CUE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + FOREIGN_LIVE_CUES + r"\s+" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(location_fact),
    slot="location",
)
LOCATION_TAGALOG_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + r"(?i:nasa)\s+" + PLACE + r"\s+(?i:na\s+ako|ako)\b",
    foreign_place(location_fact),
    slot="location",
)
LOCATION_TAGALOG_HERE_IN_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + r"(?i:dito\s+sa)\s+" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(location_fact),
    slot="location",
)
ORIGIN_FOREIGN_CUE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _FOREIGN_FROM_CUES + r"(?:\s+|(?<=taga)-)" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(origin_fact),
    slot="origin",
)
LOCATION_FOREIGN_LIVE_AFTER_COMMA = Apposition(
    r"(?<=[,;]\s)" + FOREIGN_LIVE + r"\s+" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(location_fact),
    slot="location",
)
PLACE_FOREIGN_AFTER_AND_ANYWHERE = Apposition(
    r"(?<=\s)(?i:und|et|e|y|en|och|og)\s+(?i:komme\s+aus|wohne\s+in|lebe\s+in|vivo\s+en|vivo\s+em|vivo\s+a|moro\s+em|"
    r"j'habite\s+(?:à|a|en)|abito\s+a|woon\s+in|bor\s+i|sou\s+de|soy\s+de|vengo\s+de|vengo\s+da|kom\s+uit)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    foreign_place(
        lambda m: (
            origin_fact if re.match(r"(?i:\w+\s+(?:komme|sou|soy|vengo|kom))", m.group(0)) else location_fact
        )(m)
    ),
    slot="location",
)
LOCATION_LIVE_IN_CUE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _LIVE_IN_CUES + r"\s+" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(location_fact),
    slot="location",
)
ORIGIN_FROM_CUE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _FROM_CUES + r"\s+" + PLACE + r"(?=$|[\s,.!;])",
    foreign_place(origin_fact),
    slot="origin",
)
LOCATION_CUE_AFTER_PLACE_ANYWHERE = Apposition(
    r"(?<![^\W\d_])" + PLACE + _LIVE_AFTER_PLACE, foreign_place(location_fact), slot="location"
)
ORIGIN_CUE_AFTER_PLACE_ANYWHERE = Apposition(
    r"(?<![^\W\d_])" + PLACE + _FROM_AFTER_PLACE, foreign_place(origin_fact), slot="origin"
)
LIVE_ABROAD_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + LIVE_CUES + r"\s*+" + PLACE + r"(?=$|[\s,.!;])",
    _live_abroad,
    slot="location",
    gated=True,
)
# Place first: "ami Dhaka te thaki" (Bengali), "Chennai la irukken" (Tamil), "Bilbon bizi naiz" (Basque).
LOCATION_SOUTH_ASIAN_CUE_AFTER_ANYWHERE = Apposition(
    r"(?<![^\W\d_])"
    + PLACE
    + r"\s*+-?\s*+(?i:te|e|y|la|il|le|ila)\s+(?i:thaki|thakchi|irukken|irukkiren|irukiren|"
    r"vasikkiren|vasikiren|vasikkirom)\b",
    _own_place(location_fact),
    slot="location",
    gated=True,
)
LOCATION_BASQUE_CUE_AFTER_ANYWHERE = Apposition(
    r"(?<![^\W\d_])" + PLACE + r"\s+(?i:bizi\s+naiz|bizi\s+gara)\b",
    _own_place(location_fact),
    slot="location",
    gated=True,
)
ORIGIN_TURKISH_SUFFIX_ANYWHERE = Apposition(
    r"(?<![^\W\d_])("
    + UPPER
    + r"[^\W\d_]{2,30})(?:'(?:dan|den|tan|ten)(?:ım|im|um|üm)|'?l[ıiuü]y[ıiuü]m)(?![\w'])",
    _own_place(origin_fact),
    slot="location",
    gated=True,
)
HUNGARIAN_PLACE_ANYWHERE = Apposition(
    r"(?<![^\W\d_])("
    + UPPER
    + r"[^\W\d_]{2,30}?)(?:ben|ban|ön|on|en|n)\s+(?i:élek|lakom|élünk|lakunk)(?![\w'])",
    _hungarian_place,
    slot="location",
)
# "I'm an Eritrean hematologist living in Offenbach", "I'm a Korean adoptee": a nationality before a noun (not
# alone: "I'm British." is no origin an older test lets through).
ORIGIN_NATIONALITY_ANYWHERE = Apposition(
    r"\b(?:I'm|I\s+am)\s+(?:(?i:an?|half|proudly|proud)\s+)?(" + UPPER + r"[a-z]{2,20})(?=\s+[a-z])",
    lambda m: m.group(1).lower() in NATIONALITIES and _origin_nationality(m),
    0.7,
    slot="origin",
)
