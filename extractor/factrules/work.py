"""Rules that extract the user's job and employer: "I work as", "I'm a nurse at", trades, fields, studies, a
message that opens with a role, the place a work clause names, and the same in other languages.

One module because the package keeps one module per slot and the registry's order runs through all of
them: the job and employer rules share their word lists and guards, and a reader looks up a slot in
one place. Most of its length is rule tables (a pattern, what it decides, the guards), not logic.
"""

from __future__ import annotations

import re

from .fragments import (
    DETERMINERS,
    DIETS,
    FIELDS,
    NO_VALUE,
    NOT_LETTER_BEFORE,
    ORG,
    ORG_NC,
    OTHER_HEAD,
    PLACE,
    PLACE_NC,
    REST,
    ROLE_TAIL,
    UPPER,
)
from .lexicons import (
    GERMAN_JOBS,
    JOB_PHRASES,
    LOWER_STOP,
    NATIONALITIES,
    NOT_NAMES,
    NOT_ORGS,
    NOT_ROMANCE_JOBS,
    NOT_WORK_PLACES,
    REACTION_WORDS,
    is_job_phrase,
)
from .rule import Apposition, Groups, Rule
from .values import (
    clean_object,
    clean_place,
    diet_fact,
    employer_fact,
    foreign_place,
    is_job_part,
    job_fact,
    location_fact,
    someone_else_before,
)


def _lower_org_as(m):
    """ "i work at ikea as a kitchen planner": the job, and the employer as written."""
    job = _job_as(Groups(m.group(2)))
    if m.group(1) in NOT_ORGS or not job:
        return None
    return [job, ("employer", f"User works at {m.group(1)}")]


def _job_here(m):
    """ "Marine biologist here, …" is the user; "The manager here is…" someone else."""
    role = m.group(1).lower()
    if role.split()[0] in DETERMINERS:
        return None
    return job_fact(Groups(role))


def _org_as_job(m):
    """ "I'm at Vestas as a project manager": the employer, and the job when it is one (not alone:
    the employer rule after it may read the clause too)."""
    job = job_fact(Groups(m.group(2)))
    employer = employer_fact(Groups(m.group(1)))
    return [x for x in (employer, job) if x] or None


def _job_as_after_org(m):
    """ "I work at Bosch as a welder": the job here, the employer in the employer rule."""
    return _job_as(Groups(m.group(2)))


def _job_as(m):
    role = clean_object(ROLE_TAIL.sub("", m.group(1).strip()))
    if not role or len(role.split()) > 4:
        return None
    article = "an" if role[0].lower() in "aeiou" else "a"
    return "job", f"User works as {article} {role}"


def _job_or_field(m):
    """ "my job is nursing", "my day job is accounting": a job noun, else a field of work."""
    if job := job_fact(m):
        return job
    return (
        ("job", f"User works in {m.group(1).lower()}")
        if re.fullmatch(rf"(?i:{FIELDS})", m.group(1))
        else None
    )


def _teach(m):
    subject = m.group(1)
    if subject.lower() in REACTION_WORDS or subject.lower() in ("you", "myself", "people"):
        return None
    return "job", f"User teaches {subject}"


def _work_verb(m):
    return "job", f"User does {m.group(1)} for a living"


def _employer_after_job(m):
    head = [
        w for w in m.string[: m.start(1)].split() if w.lower() not in ("at", "for", "with", "over", "the")
    ]
    if (
        m.group(0).split()[-1].lower() in REACTION_WORDS
        or not head
        or not is_job_phrase([w.lower() for w in head])
    ):
        return None  # "I'm a regular at Costco" names no employer
    if head[-1].lower() in ("student", "pupil"):
        return None  # a student's university is no employer
    return employer_fact(m)


def _status(m):
    """ "I'm retired", "I'm a stay-at-home dad", "I'm between jobs": what the user does, in the job slot."""
    said = re.sub(r"\s+", " ", m.group(1).lower())
    return "job", f"User is {said}"


BUSINESSES = (
    "bakery|café|cafe|coffee shop|restaurant|shop|store|business|company|startup|start-up|farm|bar|pub|salon|"
    "studio|clinic|practice|agency|hotel|B&B|bookshop|bookstore|gym|firm|nursery|kennel|garage|workshop|"
    "brewery|vineyard|winery|food truck|consultancy|charity|nonprofit|non-profit|daycare|hostel|boutique"
)


def _field_for(m):
    """ "I do QA for Grab": the work, and where."""
    return [("job", f"User does {m.group(1)}"), employer_fact(Groups(m.group(2)))]


def _field(m):
    return "job", f"User works in {m.group(1)}"


def _business(m):
    return "job", f"User runs {m.group(1).lower()} {m.group(2)}"


def _study(m):
    subject = m.group(1)
    if subject.lower().split()[0] in (
        "for",
        "to",
        "hard",
        "a",
        "the",
        "all",
        "late",
        "abroad",
        "now",
        "again",
        "it",
        "this",
        "every",
        "daily",
        "best",
        "better",
        "alone",
        "together",
        "online",
        "mostly",
        "sometimes",
        "there",
        "here",
        "with",
        "at",
        "in",
        "on",
        "part-time",
        "full-time",
        "nights",
        "evenings",
        "weekends",
    ):
        return None
    return "job", f"User studies {subject}"


def _title_at(m):
    title = m.group(1)
    org = m.group(2)
    if re.fullmatch(r"\w{1,3}\.", org.split()[-1]):
        return None
    return [("job", f"User works as {title}"), ("employer", f"User works at {clean_place(org)}")]


def _job_from(m):
    """ "I'm a nurse from Cebu": the job, and where the user is from."""
    job = job_fact(Groups(m.group(1)))
    return job and [job, ("origin", f"User is from {clean_place(m.group(2))}")]


# An organisation said after "with": all capitals ("KPMG") or ending in a word organisations end in
# ("Access Bank"), so "I work with Tom" names no employer.
_ORG_NAMED = (
    r"[A-Z][A-Z&]{1,7}(?![\w'])|"
    + UPPER
    + r"[\w&'\-.]*(?:\s+"
    + UPPER
    + r"[\w&'\-.]*){0,3}\s+(?:Bank|Group|Ltd|Limited|"
    r"Inc|Plc|PLC|Corp|Corporation|Company|Holdings|Foundation|Trust|Council|Agency|Ministry|Hospital|University|"
    r"Airways|Airlines|Energy|Motors|Insurance|Partners|Labs|Technologies|Systems|Solutions|Capital|Consulting|Cement|"
    r"Telecom|Pharma|Foods|Logistics|Media|Studios|Services)\b"
)


def _job_abbreviation(m):
    """ "I'm an RN", "I'm a GP in Bolton" (not alone: the place is read by the rule after)."""
    return "job", f"User works as {'an' if m.group(1)[0] in 'AEIOUaeiou' else 'a'} {m.group(1)}"


def _field_employer(m):
    return None if NO_VALUE.match(m.group(1)) else employer_fact(m)


def _bare_job(m):
    """ "glazier. 15 yrs.": a message that opens with a job phrase and nothing else."""
    return _job_here(m)


LIVING_VERBS = (
    "drive|fix|repair|teach|write|cook|clean|build|design|sell|paint|cut|deliver|sing|play|translate|code|program|"
    "photograph|shoot|edit|train|coach|grow|farm|fly|sail|bake|brew|sew|knit|draw|illustrate|test|install|walk|"
    "groom|dance|tutor|manage|run|fish|weld|sculpt|restore|inspect|audit|treat|nurse|guide|clean|dig|haul|ride"
)


def _for_a_living(m):
    """ "I drive a tuk-tuk for a living", "I fix bikes for a living": the work, in the user's words."""
    verb, what = m.group(1).lower(), m.group(2)
    if any(
        w in REACTION_WORDS or w in ("bargain", "hard", "crazy", "nuts", "mad", "wild", "me", "people")
        for w in what.lower().split()
    ):
        return None
    third = verb + ("es" if verb.endswith(("sh", "ch", "s", "x", "z")) else "s")
    return "job", f"User {third} {what} for a living"


def _job_based_in(m):
    """ "I am a chartered accountant based in Nairobi": the job and where the user lives."""
    job = job_fact(Groups(m.group(1)))
    if not job:
        return None
    return [job, ("location", f"User lives in {clean_place(m.group(2))}")]


def _promoted(m):
    return job_fact(Groups(m.group(1)))


# Vehicles one drives for work ("I drive a tram for the city", "I drive a taxi in Accra").
WORK_VEHICLES = (
    r"bus|tram|taxi|cab|forklift|ambulance|train|tuk-tuk|rickshaw|crane|lorry|HGV|minibus|school\s+bus|"
    r"delivery\s+van|truck|trolleybus|streetcar|bulldozer|digger|excavator|tractor|combine|matatu|boda|"
    r"ice\s+cream\s+van|milk\s+float|coach|tow\s+truck|dustcart|refuse\s+truck|jeepney|danfo|keke|okada|fire\s+engine|snowplough|snowplow|street\s+sweeper|garbage\s+truck|bin\s+lorry"
)


def _drive_for_work(m):
    return "job", f"User drives a {' '.join(m.group(1).lower().split())} for work"


def _bare_job_at(m):
    """ "GIS specialist at Wärtsilä, Vaasa office": a message that opens with a job and its employer."""
    role = m.group(1)
    if not is_job_part(role):
        return None
    job = job_fact(Groups(role if role.split()[0].isupper() else role.lower()))
    if not job:
        return None
    if role.lower().split()[-1] in ("student", "pupil"):
        return job
    return [job, employer_fact(Groups(m.group(2)))]


def _the_job_at(m):
    """ "I'm the head baker at Crumbs": the job, and where."""
    job = job_fact(Groups(m.group(1)))
    return job and [job, employer_fact(Groups(m.group(2)))]


def _as_a(m):
    """ "As a nurse, I work night shifts": a job or a diet ("As a child, I…" is neither)."""
    role = m.group(1).lower()
    return diet_fact(Groups(role)) if role in DIETS else job_fact(Groups(role))


def _crew(m):
    """ "I'm cabin crew for Qatar Airways", "I'm kitchen staff at a hotel": a job said without an article."""
    if " ".join(m.group(1).lower().split()) not in JOB_PHRASES:
        return None
    found = [("job", f"User works as {' '.join(m.group(1).lower().split())}")]
    if m.group(2):
        found.append(employer_fact(Groups(m.group(2))))
    return found


def _job_by_trade(m):
    """ "beekeeper by trade, about forty hives": the job, then how the user came to it."""
    return _job_here(Groups(re.sub(r"^(?i:an?)\s+", "", m.group(1))))


def _now_at(m):
    """ "I left Jumia in March and now I'm at Zalando": after leaving an employer, where the user is now."""
    return employer_fact(m) if re.search(r"(?i)\bnow\b", m.string) else None


def _study_present(m):
    """ "I study forestry": a student (the job slot holds one fact, so it keeps saying so)."""
    built = _study(m)
    return built and ("job", f"User is a student of {m.group(1)}")


def _branch(m):
    org, kind = m.group(2), m.group(3).lower()
    if org.split()[0].lower() in NOT_ORGS | DETERMINERS:
        return None
    return [("employer", f"User works at {org}"), ("job", f"User {m.group(1).lower()}s a {org} {kind}")]


# The languages users code-switch into, as lexicons of their cue words per slot (not per
# line): "I work as", "I live in", "I am <name>", "call me", an age without its unit, a diet after the copula.
# Each cue is a first-person verb form or phrase no English sentence uses; the job after "work as" is whatever
# 1–3 words come before a preposition or the clause's end, and a place after it is the user's home (as the
# labels count it). Not after someone else or a negation, doubt or past tense word of the same languages just
# before it.
_WORK_AS_CUES = (
    r"(?i:(?:ich\s+|i\s+)?(?:arbeite|arbeit|schaffe)\s+als|(?:ik\s+)?werk\s+als|(?:ek\s+)?werk\s+as|"
    r"(?:jeg\s+|jag\s+|eg\s+)?(?:jobber|jobbar|jobbe|arbeider|arbetar|arbejder|jobber)\s+som|(?:ég\s+|eg\s+)?vinn\s+sem|"
    r"pracuj[eę]\s+jako|pracuji\s+jako|pracuju\s+jako|pracujem\s+ako|radim\s+kao|delam\s+kot|lucrez\s+ca|"
    r"rabotayu|pratsyuyu|(?:je\s+)?travaille\s+comme|je\s+bosse\s+comme|(?:yo\s+)?trabajo\s+(?:como|de)|"
    r"(?:eu\s+)?trabalho\s+(?:como|de)|treballo\s+(?:com|de)|traballo\s+(?:como|de)|lavoro\s+come|"
    r"(?:saya\s+|aku\s+)?(?:bekerja|kerja)\s+sebagai|nagtatrabaho\s+(?:ako\s+)?bilang|(?:nina|na)fanya\s+kazi\s+kama|"
    r"douleuo\s+san|doulevo\s+san|ani\s+oved(?:et)?\s+(?:ke|k')-?|(?:tôi\s+)?làm\s+nghề|mi\s+laboras\s+kiel|"
    r"punoj\s+si|m\s+travay\s+kòm|mwen\s+travay\s+kòm|ngisebenza\s+njenge-?|ninafanya\s+kazi\s+ya)"
)
# The job or diet word after a copula of a Romance language: only with a job's ending and a place after it
# ("soy fisioterapeuta en Castellón", "sono restauratrice a Ravenna"), not "soy feliz en Madrid".
_ROMANCE_COPULAS = (
    r"(?i:soy|sono|sou|je\s+suis|sunt|sóc|son|faccio\s+(?:il|la|lo|l')|fa[cç]o\s+(?:o|a)|hago\s+de)"
)
_ROMANCE_JOB_ENDINGS = (
    "ista",
    "iste",
    "ero",
    "era",
    "eiro",
    "eira",
    "ier",
    "ière",
    "iere",
    "iera",
    "tore",
    "trice",
    "tora",
    "teur",
    "teuse",
    "dor",
    "dora",
    "ólogo",
    "óloga",
    "ologo",
    "ologa",
    "ologue",
    "ante",
    "eta",
    "aio",
    "aia",
    "ário",
    "ária",
    "ario",
    "aria",
    "ien",
    "ienne",
    "ico",
    "ica",
    "ique",
    "ato",
    "ata",
    "ere",
    "ere",
    "ote",
    "iste",
    "ant",
    "ent",
    "ente",
    "or",
    "ora",
    "ină",
    "ist",
    "er",
    "euta",
    "atra",
    "ecto",
    "ecta",
    "stro",
    "stra",
    "afo",
    "afa",
)
_ROMANCE_PLACE_PREP = r"(?i:en|a|em|à|in|no|na|ad|au|la|din)"


def _role_words(raw: str) -> str | None:
    role = raw.strip()
    words = role.lower().split()
    if (
        not words
        or words[0] in DETERMINERS | NOT_NAMES
        or any(w in LOWER_STOP for w in words[-1:])
        or len(role) > 40
    ):
        return None
    return role


def _work_as(m):
    if someone_else_before(m) or not (role := _role_words(m.group(1))):
        return None
    article = "an" if role[0].lower() in "aeiou" else "a"
    found = [("job", f"User works as {article} {role}")]
    if m.group(2):
        found.append(("employer", f"User works at {clean_place(m.group(2))}"))
    if m.group(3) and m.group(3).lower() not in NOT_WORK_PLACES:
        found.append(("location", f"User lives in {clean_place(m.group(3))}"))
    return found


def _romance_job(m):
    word = m.group(1)
    lowered = word.lower()
    if (
        lowered in NOT_ROMANCE_JOBS
        or lowered in NATIONALITIES
        or not lowered.endswith(_ROMANCE_JOB_ENDINGS)
        or len(lowered) < 5
        or someone_else_before(m)
    ):
        return None
    found = [("job", f"User works as {'an' if lowered[0] in 'aeiou' else 'a'} {word}")]
    if m.group(2):
        found.append(("location", f"User lives in {clean_place(m.group(2))}"))
    return found


def _german_job(m):
    word = m.group(1)
    if not word.lower().endswith(GERMAN_JOBS) or someone_else_before(m):
        return None
    return "job", f"User works as a {word}"


# "kerja di Tokopedia sebagai UX writer", "lucrez la UiPath ca DevOps", "arbeite bei Bosch als Ingenieurin":
# where, then what.
_WORK_AT_CUES = (
    r"(?i:(?:saya\s+|aku\s+)?(?:bekerja|kerja)\s+di|lucrez\s+la|(?:ich\s+)?arbeite\s+bei|(?:ik\s+)?werk\s+bij|"
    r"(?:jeg\s+)?(?:jobber|arbeider|arbejder)\s+(?:i|hos|på)|(?:jag\s+)?(?:jobbar|arbetar)\s+(?:på|hos|i)|pracuj[eę]\s+w|"
    r"(?:yo\s+)?trabajo\s+en|(?:eu\s+)?trabalho\s+(?:na|no|em)|(?:je\s+)?travaille\s+chez|lavoro\s+(?:da|per|presso|alla|al)|"
    r"nagtatrabaho\s+(?:ako\s+)?sa)"
)
_AS_WORDS = r"(?i:sebagai|ca|als|som|jako|como|comme|come|bilang)"


def _turkish(m):
    """ "Ankara'da hemşireyim": a place and a job; "Trendyol'da çalışıyorum": an employer; other verbs
    ("-yorum"): nothing."""
    if someone_else_before(m):
        return None
    if not m.group(2):
        return location_fact(m)
    if re.match(r"(?i:çalış|calis)", m.group(2)) and not m.group(2).endswith(("d", "t")):
        return employer_fact(m)
    if m.group(2).endswith(("yor", "iyor", "ıyor", "uyor", "üyor", "yoru", "d", "t")):
        return None  # another verb ("-yorum"), or the past ("-dım": "çalışıyordum", "hemşireydim")
    return [location_fact(m), ("job", f"User works as a {m.group(2)}")]


def _work_at_as(m):
    if someone_else_before(m) or not (role := _role_words(m.group(2))):
        return None
    return [
        ("employer", f"User works at {clean_place(m.group(1))}"),
        ("job", f"User works as {'an' if role[0].lower() in 'aeiou' else 'a'} {role}"),
    ]


_ROLE_WORDS = r"([^\W\d_][\w\-']*+(?:\s+[^\W\d_][\w\-']*+){0,2}?)"
_ROLE_END = (
    r"(?=\s*+(?:$|[,.!;:)(])|\s+(?i:und|og|och|og|e|y|i|и|and|ve|na|dan|at|in|im|w|we|a|en|em|à|di|u|v|ve|la|huko|"
    r"bei|hos|chez|presso|per|für|för|for|at|kwa|pada|sa|da|no|nella|nel|in\s+der|seit|since|sedan|siden|od|depuis|"
    r"desde|dal|dalla|dari|tại|ở|ở\s+tại|în|near|nær|nära|nahe|cerca|vicino|près|perto|koło|blisko|obok|outside|ved|vid)\b)"
)
_ORG_PREPOSITIONS = r"(?i:bei|hos|chez|presso|per|für|för|for|at|kwa|pada|la|u\s+firmi|w\s+firmie|tại)"
_PLACE_PREPOSITIONS = (
    r"(?i:in\s+der\s+n[äa]he\s+von|in\s+der\s+gegend\s+von|nahe|in|im|i|w|we|a|ad|en|em|à|di|u|v|ve|huko|ở|în|near|nær|nära|"
    r"cerca\s+de|vicino\s+a|près\s+de|perto\s+de|koło|kolo|blisko|obok|ved|vid|outside)"
)


def _role_as(m):
    return job_fact(Groups(m.group(1)))


# 2: "I'm joining as a backend engineer", "just started as head of data", "hired as a line cook at Nando's".
def _joined_as(m):
    found = job_fact(Groups(m.group(1)))
    if found and m.group(2):
        return [found, employer_fact(Groups(m.group(2)))]
    return found


# A CV line: "Senior Accountant, Deloitte (2019–present)", "Experience: Nurse at St James's, 2020 - now".
def _cv_line(m):
    found = job_fact(Groups(m.group(1)))
    return found and [found, employer_fact(Groups(m.group(2)))]


_JOB_WORDS = r"((?:[a-zA-Z\-]+\s+){0,3}?[a-zA-Z\-]+)"
JOB_BASED_IN = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)\s+(?i:based|living|working|residing)\s+(?i:in|out\s+of)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _job_based_in,
    0.75,
    slot="job",
    alone=True,
)
JOB_AS_AFTER_TENURE = Rule(
    r"(?i:I've|I\s+have)\s+(?i:worked|been\s+working|been)\s+(?i:at|for|with)\s+(?:the\s+)?"
    + ORG_NC
    + r"\s+(?:(?i:for|since)\s+"
    r"(?:[\w\-]+\s+){0,2}?[\w\-]+)?,?\s+(?i:as)\s+(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,2}?[a-z\-]+)(?=\s*(?:$|[,.!;(]))",
    job_fact,
    0.75,
    slot="job",
    alone=False,
)
ORG_AS_JOB = Rule(
    r"(?:(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been|I\s+work|I'm\s+working|I\s+am\s+working|I(?:'ve|\s+have)\s+(?:been\s+working|worked)|"
    r"I'm\s+employed|I\s+am\s+employed|I\s+(?:just\s+|finally\s+|recently\s+)?(?:got|landed)\s+(?:a\s+(?:new\s+)?(?:job|position|role|"
    r"internship)|hired))\s+(?i:at|with|for|by)"
    r"|(?i:I\s+(?:just\s+|recently\s+)?(?:joined|started\s+at)|I've\s+(?:just\s+)?joined))\s+(?:the\s+)?"
    + ORG
    + r"\s+(?i:as)\s+(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|since|and|but|so|lol|now|there)\b)",
    _org_as_job,
    0.8,
    slot="employer",
    alone=False,
)
# "Marine biologist here, …": the job as a greeting.
JOB_HERE = Rule(
    r"((?:[A-Za-z\-]+\s+){0,2}[A-Za-z\-]+)\s+(?i:here)\s*(?:$|[,.!;]|\s[-–—]\s)",
    _job_here,
    0.8,
    slot="job",
    alone=True,
)
JOB_AS = Rule(
    r"(?i:I\s+work\s+as|I'm\s+working\s+as|I\s+am\s+working\s+as|I've\s+been\s+working\s+as|"
    r"I\s+have\s+been\s+working\s+as|I've\s+worked\s+as|I\s+have\s+worked\s+as|"
    r"I'm\s+employed\s+as|I\s+am\s+employed\s+as|"
    r"I\s+(?:just\s+|finally\s+|recently\s+)?(?:got|landed|took|accepted)\s+an?\s+(?:new\s+)?(?:job|position|role)\s+as|"
    r"my\s+(?:job\s+title|title|occupation|profession)\s+is|I\s+(?:just\s+|recently\s+)?(?:started|began)\s+(?:working\s+)?as)"
    r"\s+(?:an?\s+)?" + REST,
    _job_as,
    0.85,
    slot="job",
    alone=False,
)
# "I work in a hospital as a porter", "I work at a bank as a cashier": the job after the workplace.
JOB_AS_AFTER_WORKPLACE = Rule(
    r"(?i:I\s+work|I'm\s+working|I\s+am\s+working)\s+(?i:in|at|for)\s+(?i:an?|the)\s+(?:[\w\-]+\s+){0,3}?[\w\-]+\s+(?i:as)\s+"
    r"(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,2}?[a-z\-]+)(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|since|and|but|so)\b)",
    job_fact,
    0.8,
    slot="job",
    alone=False,
)
FIELD_WORK_IN = Rule(
    r"(?i:I\s+(?:work|am\s+working|'m\s+working)\s+in)\s+((?i:"
    + FIELDS
    + r"))\s*(?:$|[,.!;]|\s+(?:at|for|now|these)\b)",
    _field,
    0.8,
    slot="job",
    alone=False,
)
BUSINESS = Rule(
    r"(?i:I\s+(?:run|own|manage|co-own|started)|I've\s+(?:started|opened)|I\s+opened)\s+((?i:an?|my\s+own|a\s+small|a\s+little))\s+"
    r"((?:(?i:small|little|tiny|family|local|independent|busy|new|second-hand|vintage|mobile|online|boutique)\s+)?"
    r"(?:[a-z]++\s+(?=(?i:shop|studio|store|workshop|business|company|agency|farm|clinic|practice|firm|bar|truck)\b))?(?i:"
    + BUSINESSES
    + r"))(?=\s*(?:$|[,.!;])|\s+(?i:in|at|on|with|called|named|for|since|near|downtown|here|there|now|"
    r"of|and|together|from|just|outside|right|by|off|over)\b)",
    _business,
    0.75,
    slot="job",
    alone=True,
)
STATUS = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:now|currently|happily|semi-|recently)\s*)?((?i:retired|unemployed|self[\s\-]employed|"
    r"between\s+jobs|a\s+stay[\s\-]at[\s\-]home\s+(?:mom|mum|dad|parent)|a\s+full[\s\-]time\s+(?:mom|mum|dad|parent)|on\s+parental\s+leave))"
    r"(?:\s+(?i:now|these\s+days))?\s*(?:$|[,.!;]|\s+(?i:after|last|this|in|to|of)\b|\s+(?i:from)\s+(?!(?i:football|soccer|tennis|rugby|cricket|"
    r"running|racing|competitive|professional|pro|sports?|boxing|cycling|swimming|golf|basketball|baseball|hockey|the\s+game)\b))",
    _status,
    0.8,
    slot="job",
    alone=True,
)
STUDY = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:currently|now)\s+)?(?i:studying|doing\s+(?:a|my)\s+(?:degree|phd|PhD|masters?|bachelor's|doctorate|MSc|BSc|MA|BA)\s+in)\s+"
    r"([a-zA-Z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30})?)(?=\s+(?i:at|in)\s|\s*(?:$|[,.!;]))",
    _study,
    0.75,
    slot="job",
    alone=True,
)
TITLE_AT = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:the|a|an)\s+)?((?:CEO|CTO|CFO|COO|CIO|CMO|VP|founder|co-founder|cofounder|owner|"
    r"head\s+of\s+[a-z]+|director\s+of\s+[a-z]+|VP\s+of\s+[a-z]+|manager\s+of\s+[a-z]+))\s+(?i:of|at)\s+"
    + ORG
    + r"(?=$|[\s,.!;])",
    _title_at,
    0.8,
    slot="job",
    alone=True,
)
JOB_AS_AFTER_ORG = Rule(
    r"(?i:I\s+work|I've\s+worked|I\s+have\s+worked|I've\s+been\s+working|I\s+have\s+been\s+working|I'm\s+working)"
    r"\s+(?i:at|for)\s+" + ORG + r"\s+(?:(?i:in)\s+" + PLACE_NC + r"\s+)?(?i:as)\s+(?:an?\s+)?" + REST,
    _job_as_after_org,
    0.8,
    slot="job",
    alone=False,
)
LOWER_ORG_AS = Rule(
    r"(?i:I\s+work|I'm\s+working)\s+(?i:at|for)\s+([a-z][a-z0-9&'\-]{1,20})\s+(?i:as)\s+(?:an?\s+)?" + REST,
    _lower_org_as,
    0.75,
    slot="job",
    alone=True,
)
JOB_OR_FIELD = Rule(
    r"(?i:my\s+(?:(?:day|main|real|full-time|current)\s+)?(?:job|role|position|occupation)\s+is)\s+(?:an?\s+)?((?:[a-z\-]+\s+){0,3}?[a-z\-]+)"
    r"\s*(?:$|[,.!;]|\s+(?i:so|and|but|because|lol|though|at|for|in|with|since|now)\b)",
    _job_or_field,
    0.8,
    slot="job",
    alone=True,
)
JOB_SELF_DESCRIBED = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been)\s+(?:(?i:currently|now|still|also|actually)\s+)?(?:an?\s+)"
    r"((?:[a-zA-Z\-]+\s+){0,3}[a-z\-]+)(?:\s+by\s+(?:profession|trade))?"
    r"\s*(?:$|[,.!;(]|\s+(?:over\s+)?at\b|\s+in\b|\s+for\b|\s+with\b|\s+on\s+(?:the|an?)\b|\s+(?i:since|and|but|lol|haha|tbh|near|outside)\b|"
    r"\s+(?i:been\s+(?:doing|at|in|working))\b)",
    job_fact,
    0.85,
    slot="job",
    alone=False,
)
EMPLOYER_WORK_AT = Rule(
    r"(?i:I\s+work\s+(?:at|for)|I'm\s+working\s+(?:at|for)|I\s+am\s+working\s+(?:at|for)|"
    r"I'm\s+employed\s+(?:at|by|with)|I\s+am\s+employed\s+(?:at|by|with)|"
    r"I\s+(?:just\s+|recently\s+)?(?:started|began)\s+(?:a\s+new\s+job|working)\s+(?:at|for)|"
    r"I've\s+(?:just\s+)?(?:started|begun)\s+(?:a\s+new\s+job|working)\s+(?:at|for)|"
    r"I\s+(?:just\s+|recently\s+)?joined|I've\s+(?:just\s+)?joined|my\s+employer\s+is|"
    r"I'm\s+(?:currently\s+|now\s+)employed\s+(?:at|by)|I\s+am\s+(?:currently\s+|now\s+)employed\s+(?:at|by)|"
    r"I(?:'ve|\s+have)\s+(?:been\s+working|worked)\s+(?:at|for)|"
    r"I\s+(?:just\s+|finally\s+)?(?:got|landed)\s+(?:a\s+(?:new\s+)?(?:job|position|role)|hired)\s+(?:at|with|by)|"
    r"I\s+(?:just\s+)?got\s+hired\s+(?:at|by)|I\s+(?:just\s+|recently\s+)?started\s+at|"
    r"I(?:'ve|\s+have)\s+been\s+at|I\s+work\s+(?:in|on)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:at|for)|"
    r"I\s+(?:just\s+|finally\s+|recently\s+)?(?:got|landed)\s+an?\s+(?:new\s+)?(?:job|position|role)\s+as\s+"
    r"(?:an?\s+)?[a-z\-]+(?:\s+[a-z\-]+){0,3}\s+(?:at|with)|"
    r"I\s+work\s+(?:at|for)\s+an?\s+(?:[a-z\-]+\s+){0,3}(?:called|named)|"
    r"I\s+(?:just\s+|recently\s+)?(?:started|began)\s+(?:working\s+)?as\s+an?\s+(?:[a-zA-Z\-]+\s+){0,3}[a-z\-]+\s+(?:at|with))\s+(?:the\s+)?"
    + ORG
    + r"(?=$|[\s,.!;])(?!\s+(?i:before|previously|once|years\s+ago|in\s+the\s+past))",
    employer_fact,
    0.85,
    slot="employer",
    alone=True,
)
EMPLOYER_AFTER_SELF_DESCRIBED_JOB = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:currently|now|still|also|actually)\s+)?an?\s+(?:[a-zA-Z\-]+\s+){0,3}[a-z\-]+\s+"
    r"(?i:(?:over\s+)?at|for|with)\s+(?:the\s+)?" + ORG + r"(?=$|[\s,.!;])",
    _employer_after_job,
    0.8,
    slot="employer",
    alone=False,
)
# Work named by its verb: "I teach maths at a school", "I do accounting for a living".
TEACH = Rule(
    r"(?i:I\s+teach)\s+([a-zA-Z][a-z\-]{1,30})(?=\s+(?i:at|in|for|to|on|online|part-time|full-time|privately|classes|lessons)\b|\s*(?:$|[,.!;]))",
    _teach,
    0.8,
    slot="job",
    alone=True,
)
WORK_VERB = Rule(
    r"(?i:I\s+do)\s+([a-z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30})?)\s+(?i:for\s+a\s+living)",
    _work_verb,
    0.85,
    slot="job",
    alone=True,
)
FIELD_I_DO = Rule(
    r"(?i:I\s+do)\s+((?:[A-Z]{2,4}|(?i:design|marketing|sales|support|accounting|bookkeeping|payroll|research|testing|"
    r"engineering|recruiting|recruitment|consulting|translation|copywriting|localisation|localization|analytics|"
    r"compliance|security|devops|frontend|backend|data\s+science|customer\s+support|web\s+design|graphic\s+design)))"
    r"(?:\s+(?i:work))?\s+(?i:for|at)\s+" + ORG + r"(?=$|[\s,.!;])",
    _field_for,
    0.8,
    slot="job",
    alone=True,
)
# "I'm at Atlassian now, not Canva" / "not at Revolut anymore, it's Monzo now": a change of employer.
EMPLOYER_CHANGED_NOT_OTHER = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:now)\s+)?(?i:at|with)\s+"
    + ORG
    + r"(?:\s+(?i:now))?,?\s+(?i:not)\s+(?:(?i:at|with)\s+)?"
    + rf"{UPPER}",
    employer_fact,
    0.8,
    needs=r"(?i)\b(?:jobs?|work|working|employer|company|hired|left|quit|switched|joined)\b",
    slot="employer",
    alone=True,
)
EMPLOYER_CHANGED_NO_LONGER_AT = Rule(
    r"(?:(?i:I'm|I\s+am)\s+)?(?i:not|no\s+longer)\s+(?i:at|with)\s+" + ORG + r"\s+(?i:any\s?more)[,;.]?\s+"
    r"(?i:it's|it\s+is|I'm\s+(?:at|with)|now\s+(?:at|with))\s+" + ORG + r"(?:\s+(?i:now))?\s*(?:$|[.!;])",
    lambda m: employer_fact(Groups(m.group(2))),
    0.8,
    slot="employer",
    alone=True,
)
JOB_FROM = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)\s+(?i:from)\s+"
    + PLACE
    + r"(?=$|[\s,.!;])",
    _job_from,
    0.75,
    slot="job",
    alone=True,
)
JOB_QUALIFIED_OR_BECAME = Rule(
    r"(?i:I(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:qualified|trained|retrained|graduated)\s+as|"
    r"I\s+(?:just\s+|recently\s+|finally\s+)?became)\s+(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|last|this|in|after|and|but|so|lol)\b)",
    job_fact,
    0.8,
    slot="job",
    alone=False,
)
EMPLOYER_WITH_TEAM = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been)\s+(?i:at|with)\s+(?:the\s+)?"
    + ORG
    + r",?\s+(?:(?i:on|in|at|part\s+of)\s+)?"
    r"(?:(?i:the|their|its)\s+)?(?:[\w\-]+\s+){0,3}?(?i:team|department|dept|division|office|unit|squad|desk|plant|factory|site|warehouse|"
    r"branch|depot|lab|brewery|mine|yard|hub|campus|HQ|headquarters|facility|refinery|mill|store|shop|hospital)\b",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
EMPLOYER_FOR_YEARS = Rule(
    r"(?i:I've|I\s+have)\s+been\s+(?i:at|with)\s+(?:the\s+)?"
    + ORG
    + r"\s+(?:(?i:for)\s+)?(?:(?i:almost|nearly|over|about|around|"
    r"just\s+over|just\s+under)\s+)?(?:\d{1,2}|(?i:a|two|three|four|five|six|seven|eight|nine|ten|a\s+few|several|many))\s+(?i:years?)\b",
    employer_fact,
    0.75,
    needs=r"(?i)\b(?:work|job|career|team|colleagues?|role|company|employer|customer\s+care|office|years?\s+now|"
    r"in\s+(?:sales|support|marketing|finance|IT|HR|ops|operations|engineering|customer))\b|\bat\s+" + UPPER,
    slot="employer",
    alone=True,
)
FIELD_IN = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:currently|now)\s+)?(?i:in)\s+((?i:"
    + FIELDS
    + r"))(?=\s*(?:$|[,.!;])|\s+(?:at|for|with|now|these)\b)",
    _field,
    0.75,
    slot="job",
    alone=False,
)
EMPLOYER_AFTER_FIELD = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:currently|now)\s+)?(?i:in)\s+(?i:"
    + FIELDS
    + r")\s+(?i:at|for|with)\s+(?:the\s+)?"
    + ORG
    + r"(?=$|[\s,.!;])",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
JOB_ABBREVIATION = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,2}(?:RN|GP|NP|EMT|CNA|LPN|HCA|CPA|PA|SRE|DJ|MD|QA))"
    r"(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|and|but|so|since)\b)",
    _job_abbreviation,
    0.75,
    slot="job",
    alone=False,
)
EMPLOYER_AFTER_WORK_AS_JOB = Rule(
    r"(?i:I\s+work|I'm\s+working|I\s+am\s+working|I've\s+worked|I\s+have\s+worked|I'm\s+employed|I\s+am\s+employed)\s+(?i:as)\s+(?i:an?)\s+(?:[a-zA-Z\-]+\s+){0,3}?"
    r"[a-z\-]+\s+(?i:at|for|with)\s+(?:the\s+)?" + ORG + r"(?=$|[\s,.!;])",
    _employer_after_job,
    0.75,
    slot="employer",
    alone=False,
)
EMPLOYER_WORK_WITH = Rule(
    r"(?i:I\s+work|I'm\s+working|I\s+am\s+working|I've\s+worked|I\s+have\s+worked|I'm|I\s+am)\s+(?i:with)\s+("
    + _ORG_NAMED
    + r")"
    r"(?=$|[\s,.!;])",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
EMPLOYER_MY_COMPANY = Rule(
    r"(?i:my\s+(?:company|employer|firm|workplace)\s+is(?:\s+called)?|the\s+company\s+I\s+work\s+(?:for|at)\s+is(?:\s+called)?)\s+"
    + ORG
    + r"(?=$|[\s,.!;])",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
FIELD_JOB = Rule(
    r"(?:(?i:my)\s+)?(?i:occupation|profession|job(?:\s+title)?|role|work|position)\s*(?::|\s[-–—])\s*(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,3}?[a-zA-Z\-]+)"
    r"\s*(?:$|[,.!;(])",
    lambda m: job_fact(Groups(m.group(1).lower())),
    0.75,
    slot="job",
    alone=True,
)
FIELD_EMPLOYER = Rule(
    r"(?i:employer|company|workplace|works?\s+at)\s*:\s*" + ORG + r"\s*(?:$|[,.!;(])",
    _field_employer,
    0.75,
    slot="employer",
    alone=True,
)
BARE_JOB = Rule(
    r"((?:[A-Za-z\-]+\s+){0,2}[A-Za-z\-]+)\s*(?:[.!]|,\s*\d{1,3}\b)",
    _bare_job,
    0.7,
    needs=r"^\s*(?:[A-Za-z\-]+\s+){0,2}[A-Za-z\-]+\s*(?:[.!]\s*(?:$|\d)|,\s*\d{1,3}\b|$)",
    slot="job",
    alone=True,
)
# Jobs: "I got promoted to data scientist", "I drive a tuk-tuk for a living", "I work on the ferries as a
# deckhand".
PROMOTED = Rule(
    r"(?i:I\s+(?:just\s+|recently\s+|finally\s+)?got\s+promoted|I\s+was\s+(?:just\s+|recently\s+)?promoted|"
    r"I've\s+(?:just\s+|recently\s+|finally\s+)?been\s+promoted|I\s+have\s+been\s+promoted)\s+(?i:to)\s+(?:an?\s+)?"
    r"((?:[a-zA-Z\-]+\s+){0,3}?[a-z\-]+)(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|last|this|after|and|but|so|lol)\b)",
    _promoted,
    0.8,
    slot="job",
    alone=True,
)
FOR_A_LIVING = Rule(
    r"(?i:I)\s+("
    + LIVING_VERBS
    + r")\s+((?:an?\s+|the\s+)?(?:[\w\-]+\s+){0,2}?[\w\-]+)\s+(?i:for\s+a\s+living)\b",
    _for_a_living,
    0.75,
    slot="job",
    alone=True,
)
JOB_AS_AFTER_WORK_ON = Rule(
    r"(?i:I\s+work|I'm\s+working|I\s+am\s+working)\s+(?i:on|in|at|with)\s+(?i:the|a|an)\s+(?:[a-z\-]+\s+){0,2}?[a-z\-]+\s+(?i:as)\s+"
    r"(?:an?\s+)?((?:[a-zA-Z\-]+\s+){0,2}?[a-z\-]+)(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|since|and|but|so)\b)",
    job_fact,
    0.8,
    slot="job",
    alone=False,
)
# Employers: "I'm with Hapag-Lloyd, been there since 2019", "now at a tiny startup called Tenfold".
EMPLOYER_WITH_SINCE = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:with)\s+(?:the\s+)?"
    + ORG
    + r",?\s+(?:(?i:been\s+there)\s+)?(?i:since\s+\d{4}|for\s+(?:\d{1,2}|a\s+few|"
    r"several|two|three|four|five|six|seven|eight|nine|ten)\s+years?)\b",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
EMPLOYER_KIND_CALLED = Rule(
    r"(?:(?i:I'm|I\s+am|I\s+work|I'm\s+working|I\s+am\s+working)\s+)?(?:(?i:now)\s+)?(?i:at|for)\s+(?i:an?)\s+(?:[\w\-]+\s+){0,2}?"
    r"(?i:startup|start-up|company|firm|agency|studio|consultancy|charity|nonprofit|non-profit|bank|school|clinic|hospital|"
    r"practice|bakery|restaurant|shop|lab|publisher|brewery|hotel)\s+(?i:called|named)\s+"
    + ORG
    + r"(?=$|[\s,.!;])",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
EMPLOYER_EMPLOYED_BY = Rule(
    r"(?i:employed\s+by|working\s+for|employed\s+at)\s+(?:the\s+)?"
    + ORG
    + r"(?=\s*(?:$|[,.!;])|\s+(?i:as|since|for)\b)",
    employer_fact,
    0.75,
    needs=r"^\W*(?i:employed|working)\b",
    slot="employer",
    alone=True,
)
# Jobs: "beekeeper by trade", "I drive a tram for the city", "GIS specialist at Wärtsilä", "I'm cabin crew for
# X".
JOB_BY_TRADE = Rule(
    r"((?:[A-Za-z\-]+\s+){0,2}[A-Za-z\-]+)\s+(?i:by\s+(?:trade|profession))(?=\s*(?:$|[,.!;]))",
    _job_by_trade,
    0.75,
    slot="job",
    alone=True,
)
JOB_DRIVER_FOR_WORK = Rule(
    r"(?i:I)\s+(?i:drive)\s+(?i:an?|the)\s+((?i:"
    + WORK_VEHICLES
    + r"))(?=\s+(?i:for)\s+(?!(?i:fun|pleasure|a\s+hobby|my|the\s+kids|"
    r"kicks|free)\b)|\s+(?i:in|around|across)\s+"
    + UPPER
    + r"|\s+(?i:on\s+(?:route|the\s+\w+\s+line)|nights|night\s+shifts)\b"
    # "i drive a lorry between dover and glasgow", "I drive a bus." (a vehicle no one drives for fun)
    r"|\s+(?i:between|across|all\s+over|up\s+and\s+down|long[\s\-]haul|for\s+a\s+living|full[\s\-]time|part[\s\-]time)\b)",
    _drive_for_work,
    0.75,
    slot="job",
    alone=True,
)
JOB_DRIVER_OF_WORK_VEHICLE = Rule(
    r"(?i:I)\s+(?i:drive)\s+(?i:an?)\s+((?i:bus|tram|taxi|cab|forklift|lorry|HGV|minibus|milk\s+float|ambulance|school\s+bus|"
    r"bin\s+lorry))\s*+(?:$|[,.!;])",
    _drive_for_work,
    0.75,
    slot="job",
    alone=True,
)
BARE_JOB_AT = Rule(
    r"((?:[A-Za-z\-]+\s+){0,3}?[A-Za-z\-]+)\s+(?i:at|for|with)\s+(?:the\s+)?" + ORG + r"(?=\s*(?:$|[,.!;]))",
    _bare_job_at,
    0.7,
    needs=r"^\W*(?:[A-Za-z\-]+\s+){0,3}[A-Za-z\-]+\s+(?i:at|for|with)\s+(?:the\s+)?" + UPPER,
    slot="job",
    alone=True,
)
CREW = Rule(
    r"(?i:I'm|I\s+am)\s+((?:[a-z\-]+\s+)?(?i:crew|staff|master|sweep|owner|lady|guard|worker|surgeon))"
    r"(?:\s+(?i:for|at|with|on)\s+(?:the\s+)?"
    + ORG
    + r")?(?=\s*(?:$|[,.!;])|\s+(?i:at|for|in|on|and|but|since)\b)",
    _crew,
    0.75,
    slot="job",
    alone=True,
)
# Employers: "I left Jumia in March and now I'm at Zalando".
NOW_AT = Rule(
    r"(?i:I'm|I\s+am)\s+(?:(?i:now)\s+)?(?i:at|with)\s+(?:the\s+)?"
    + ORG
    + r"(?:\s+(?i:now))?(?:\s*(?:$|[,.!;])|\s+(?i:doing|as|working|in)\s)",
    _now_at,
    0.75,
    needs=r"\b(?i:left|quit|resigned\s+from|moved\s+on\s+from|used\s+to\s+work\s+(?:at|for)|worked\s+(?:at|for))\s+"
    r"(?:(?i:my\s+job)|" + UPPER + r")",
    slot="employer",
    alone=True,
)
EMPLOYER_OF_TEAM_I_MANAGE = Rule(
    r"(?i:I)\s+(?i:manage|lead|run|head|supervise)\s+(?i:a|the|our|an)\s+(?:[\w\-]+\s+){0,2}?(?i:team|department|group|unit|crew|"
    r"squad|desk|lab|office)\s+(?i:at|for|in)\s+(?:the\s+)?" + ORG + r"(?=$|[\s,.!;])",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
JOB_THE_ROLE_AT = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:the)\s+((?:[a-z\-]+\s+){0,2}[a-z\-]+)\s+(?i:at|for|of)\s+(?:the\s+)?"
    + ORG
    + r"(?=$|[\s,.!;])",
    _the_job_at,
    0.75,
    slot="job",
    alone=True,
)
# "As a nurse, I work nights", "Being a vegan, I…": the user's own job or diet, said before the statement.
AS_A = Rule(
    r"(?i:as|being)\s+(?i:an?)\s+((?:[a-z\-]+\s+){0,2}?[a-z\-]+)\s*[,]?\s*$",
    _as_a,
    0.75,
    needs=r"^\W*(?i:as|being)\s+(?i:an?)\s+(?:[a-z\-]+\s+){0,2}?[a-z\-]+,\s+(?:I|I'm|I've|I'd|my)\b",
    slot="job",
    alone=True,
)
# "I'm at Össur, designing prosthetic feet": at an organisation, doing the work.
EMPLOYER_WHILE_DOING = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:at)\s+"
    + ORG
    + r",\s+(?=(?i:designing|building|developing|engineering|managing|leading|writing|"
    r"running|teaching|coding|researching|selling|testing|nursing|programming|analysing|analyzing|recruiting|consulting|"
    r"editing|producing|translating|working\s+(?:on|as|in))\b)",
    employer_fact,
    0.75,
    slot="employer",
    alone=True,
)
# "I manage a Jollibee branch in Pasig", "I run the Tesco Express store on the high street".
BRANCH = Rule(
    r"(?i:I)\s+((?i:manage|run))\s+(?i:a|an)\s+"
    + ORG
    + r"\s+((?i:branch|store|outlet|franchise|shop|restaurant|depot))\b",
    _branch,
    0.75,
    slot="employer",
    alone=True,
)
# "I study forestry in Hà Nội", "i study law": the present tense, as "I'm studying" is read.
STUDY_PRESENT = Rule(
    r"(?i:I)\s+(?i:study)\s+([a-zA-Z][a-z\-]{1,30}(?:\s+[a-z][a-z\-]{1,30})?)(?=\s+(?i:at|in)\s|\s*(?:$|[,.!;])|\s+(?i:and|but)\b)",
    _study_present,
    0.75,
    slot="job",
    alone=True,
)
# "I'm the only falconer in Westport", "I'm the village blacksmith here".
JOB_ONLY_OR_LOCAL = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:the)\s+(?i:only|local|resident|village|town|island|parish)\s+((?:[a-z\-]+\s+)?[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;])|\s+(?i:in|at|for|around|here|on)\b)",
    job_fact,
    0.75,
    slot="job",
    alone=False,
)
# "I'm freelancing as a motion designer now", "contracting as a QA engineer".
JOB_FREELANCE_AS = Rule(
    r"(?i:I'm|I\s+am|I've\s+been|I\s+have\s+been)\s+(?:(?i:now|currently|also)\s+)?(?i:freelancing|contracting|consulting|"
    r"moonlighting|temping|volunteering|interning|working\s+freelance)\s+(?i:as)\s+(?i:an?\s+)?((?:[a-zA-Z\-]+\s+){0,2}?[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;(])|\s+(?i:now|at|in|for|with|since|and|but|these)\b)",
    job_fact,
    0.8,
    slot="job",
    alone=False,
)
# "I do cybersecurity at Kongsberg Maritime now": a field of work, then where.
FIELD_I_DO_AT = Rule(
    r"(?i:I\s+do)\s+((?i:cybersecurity|cyber\s+security|infosec|IT|HR|QA|UX|UI|SEO|PR|ops|operations|logistics|procurement|"
    r"sales|marketing|finance|accounting|admin|research|design|engineering|nursing|teaching|tech\s+support|it\s+support|"
    r"fraud\s+analytics|data\s+analytics|data\s+engineering|software\s+engineering|product|product\s+design|content|comms|"
    r"communications|legal|compliance|payroll|recruiting|recruitment|consulting|analytics|translation|security))"
    r"\s+(?i:for|at|with)\s+" + ORG + r"(?=$|[\s,.!;])",
    _field_for,
    0.8,
    slot="job",
    alone=True,
)
JOINED_AS = Rule(
    r"(?:(?i:I'm|I\s+am|I've|I\s+have|I)\s+)?(?:(?i:just|recently|officially)\s+)?(?:(?i:been)\s+)?(?i:joining|joined|hired|starting|"
    r"started|onboarding|coming\s+on|brought\s+on|promoted)\s+(?:(?i:the\s+team|the\s+company|here|today|this\s+week|last\s+week)\s+)?"
    r"(?i:as)\s+(?:(?i:an?|the|our|your)\s+)?"
    + _JOB_WORDS
    + r"(?:\s+(?i:at|with|for)\s+(?:the\s+)?"
    + ORG
    + r")?"
    r"(?=\s*(?:$|[,.!;(])|\s+(?i:on|in|at|for|with|since|and|but|from|last|this|today|team)\b)",
    _joined_as,
    0.75,
    slot="job",
    alone=True,
)
CV_LINE = Rule(
    r"(?:(?i:experience|current\s+role|current\s+position|role|position|title|work|employment|job)\s*:\s*)?"
    + _JOB_WORDS
    + r"\s*+(?:,|\s(?i:at)|\s@|\s[-–—])\s*+(?:the\s+)?"
    + ORG
    + r"\s*+[,(]\s*+(?:(?i:since)\s+)?\d{4}\s*+(?:[-–—]|(?i:to))\s*+"
    r"(?i:present|now|current|today|date)\b",
    _cv_line,
    0.7,
    slot="job",
    alone=True,
)
# "joining platform as a compiler engineer", "joining the data team as an analyst": a team in lower case, then
# the job.
JOB_JOINING_TEAM_AS = Rule(
    r"(?:(?i:I'm|I\s+am|I've|I\s+have|I)\s+)?(?:(?i:just|recently|officially)\s+)?(?:(?i:been)\s+)?(?i:joining|joined)\s+"
    r"(?:(?i:the)\s+)?[a-z][a-z\-]{1,20}(?:\s+(?i:team|squad|group|crew|org|department))?\s+(?i:as)\s+(?:(?i:an?|the|our|your)\s+)?"
    + _JOB_WORDS
    + r"(?=\s*(?:$|[,.!;(])|\s+(?i:on|in|at|for|with|since|and|but|from|last|this|today)\b)",
    _role_as,
    0.75,
    slot="job",
    alone=True,
)
# "my manager at Unilever", "my colleagues at KPMG": the user works there too.
EMPLOYER_OF_MY_COLLEAGUES_ANYWHERE = Apposition(
    r"\b(?i:my|our)\s+(?:(?i:line|new|current)\s+)?(?i:boss|manager|supervisor|colleagues?|co-?workers?|team|employer|"
    r"team\s+lead|teammates?)\s+(?i:at)\s+(?:(?i:the)\s+)?" + ORG + r"(?=$|[\s,.!;])",
    lambda m: employer_fact(m),
    slot="employer",
)
EMPLOYER_DUTCH_OR_GERMAN_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + r"(?i:(?:ik\s+)?werk\s+bij|ich\s+arbeite\s+bei|arbeite\s+bei)\s+"
    + ORG
    + r"(?=$|[\s,.!;])",
    foreign_place(employer_fact),
    slot="employer",
)
WORK_AS_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + _WORK_AS_CUES
    + r"\s+(?:(?i:un|una|uno|un'|il|la|lo|l'|le|el|ein|eine|einen|een|et|en|um|uma|'n)\s+)?"
    + _ROLE_WORDS
    + _ROLE_END
    + r"(?:\s+"
    + _ORG_PREPOSITIONS
    + r"\s+"
    + ORG
    + r"(?=$|[\s,.!;]))?"
    + r"(?:\s+"
    + _PLACE_PREPOSITIONS
    + r"\s+"
    + PLACE
    + r"(?=$|[\s,.!;]))?",
    _work_as,
    slot="job",
    gated=True,
)
WORK_AT_AS_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + _WORK_AT_CUES
    + r"\s+"
    + ORG
    + r"\s+"
    + _AS_WORDS
    + r"\s+(?:(?i:un|una|uno|il|la|el|ein|eine|een|en|um|uma)\s+)?"
    + _ROLE_WORDS
    + _ROLE_END,
    _work_at_as,
    slot="employer",
    gated=True,
)
GERMAN_JOB_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + r"(?:(?i:ich|i|und)\s+)?(?i:bin)\s+(?:(?i:ein|eine|gelernter|gelernte|gelernt)\s+)?"
    r"([A-ZÄÖÜ][a-zäöüß]{3,30})(?=$|[\s,.!;])",
    _german_job,
    slot="job",
    gated=True,
)
ROMANCE_JOB_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE
    + _ROMANCE_COPULAS
    + r"\s+(?:(?i:un|una|uno|il|la|lo|l'|o|a|um|uma)\s+)?([^\W\d_][\w\-]{3,25})"
    r"(?:\s+" + _ROMANCE_PLACE_PREP + r"\s+" + PLACE + r"(?=$|[\s,.!;]))",
    _romance_job,
    slot="job",
    gated=True,
)
# Turkish: "Ankara'da hemşireyim" (a job in Ankara), "Eskişehir'de yaşıyorum" (I live in), "İzmirliyim" (I'm
# from).
TURKISH_ANYWHERE = Apposition(
    r"(?<![^\W\d_])("
    + UPPER
    + r"[^\W\d_]{2,30})'(?:da|de|ta|te)\s+(?:(?i:yaşıyorum|yasiyorum|oturuyorum|kalıyorum|kaliyorum|"
    r"yaşıyoruz|yasiyoruz|oturuyoruz)|([a-zçğıöşü]{3,25}?)y?(?:ım|im|um|üm))(?![\w'])",
    lambda m: _turkish(m),
    slot="employer",
    gated=True,
)
# "on behalf of my employer, Brembo S.p.A.", "my employer is Vattenfall".
EMPLOYER_NAMED_ANYWHERE = Apposition(
    r"\b(?i:my)\s+(?:(?i:current|new)\s+)?(?i:employer)(?:,|\s+(?i:is))\s+(?:(?i:the)\s+)?"
    + ORG
    + r"(?=$|[\s,.!;])",
    lambda m: employer_fact(m),
    slot="employer",
)
# "regarding my role as homologation specialist", "in my job as a night porter".
JOB_MY_ROLE_AS_ANYWHERE = Apposition(
    r"\b(?i:my)\s+(?:(?i:current|new|day)\s+)?(?i:role|job|position|post)\s+(?i:as)\s+(?:(?i:an?|the)\s+)?"
    r"((?:[a-zA-Z\-]+\s+){0,2}?[a-zA-Z\-]+)(?=\s*(?:$|[,.!;(])|\s+(?i:at|in|for|with|since|and|but|here)\b|\s+I\b)",
    _role_as,
    slot="job",
)
# "formerly a loss adjuster, now retraining as an embalmer", "I'm retraining as a plumber" (not after someone
# else).
JOB_RETRAINING_AS_ANYWHERE = Apposition(
    r"(?:^|,\s*+|\b(?:I'm|I\s+am)\s+)(?:(?i:now|currently|also)\s+)?(?i:retraining|re-training|requalifying)\s+(?i:as)\s+"
    r"(?:(?i:an?)\s+)?" + _JOB_WORDS + r"(?=\s*(?:$|[,.!;(])|\s+(?i:at|in|with|and|but|now|after)\b)",
    lambda m: not OTHER_HEAD.search(m.string, max(0, m.start() - 200), m.start()) and _role_as(m),
    slot="job",
)
