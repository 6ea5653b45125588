"""Word lists the rules consult, kept as data: one word or phrase a line in lexicons/*.txt (read once, at
import), and the checks made of them (is this word a job noun?). A list here decides what a word is not as
often as what it is: `NOT_NAMES` holds words that open a sentence like a name and are none.
"""

from __future__ import annotations

from pathlib import Path

_FOLDER = Path(__file__).resolve().parent / "lexicons"


def _words(name: str) -> frozenset[str]:
    """The lines of lexicons/<name>.txt, without blank ones."""
    return frozenset(
        line for line in (_FOLDER / f"{name}.txt").read_text(encoding="utf-8").splitlines() if line
    )


# Job nouns. Those of jobs.txt long enough also end a compound ("lifeguard", "schoolteacher"); those of
# jobs_whole_word.txt count only as whole words.
_JOBS_ENDING_COMPOUNDS = _words("jobs")
JOBS = _JOBS_ENDING_COMPOUNDS | _words("jobs_whole_word")
# The words a statement may open with ("oh and", "hi team", "fun fact", "currently"), one regular expression a
# line, in the order they are tried (`rule._openings` reads them in this order).
OPENERS = tuple(line for line in (_FOLDER / "openers.txt").read_text(encoding="utf-8").splitlines() if line)
JOB_PHRASES = _words("job_phrases")
NATIONALITIES = _words("nationalities")
NOT_INTRO = _words("not_intro")
NOT_JOB_IST = _words("not_job_ist")
NOT_JOB_MODIFIERS = _words("not_job_modifiers")
NOT_LOWER_INTRO = _words("not_lower_intro")
NOT_LOWER_NAMES = _words("not_lower_names")
NOT_NAMES = _words("not_names")
NOT_NAMES_ABROAD = _words("not_names_abroad")
NOT_ORGS = _words("not_orgs")
NOT_PLACES = _words("not_places")
NOT_PLACE_WORDS = _words("not_place_words")
NOT_WORK_PLACES = _words("not_work_places")
ONE_THING = _words("one_thing")
PEOPLE_NOUNS = _words("people_nouns")
REACTION_WORDS = _words("reaction_words")
GERMAN_JOBS = tuple(sorted(_words("german_jobs")))  # endings of German nouns of work ("Krankenschwester")
LOWER_STOP = _words("lower_stop")
NOT_NAMES_AFTER_COPULA = _words("not_names_after_copula")
NOT_ROMANCE_JOBS = _words("not_romance_jobs")
RUN_ON_NOT_AFTER = _words("run_on_not_after")


# Job nouns by their ending ("beekeeper", "goldsmith", "radiographer", "cardiologist", "optician").
JOB_ENDINGS = (
    "keeper",
    "smith",
    "mason",
    "grapher",
    "ologist",
    "ician",
    "wright",
    "monger",
    "maker",
    "tender",
)
# Compounds that end in a job noun and are none ("a Liverpool supporter", "a homeowner").
NOT_JOB_COMPOUNDS = frozenset(
    "supporter homeowner sleepwalker screwdriver storyteller observer bodybuilder".split()
)
# Job nouns long enough to end a compound ("lifeguard" is a guard, "schoolteacher" a teacher).
_JOB_SUFFIXES = tuple(
    sorted((j for j in _JOBS_ENDING_COMPOUNDS if len(j) >= 5 and "-" not in j), key=len, reverse=True)
)


def is_job_phrase(words: list[str]) -> bool:
    """The last word of a role is a job noun, or its last two words are a job phrase."""
    return bool(words) and (is_job(words[-1]) or " ".join(words[-2:]).lower() in JOB_PHRASES)


def is_job(word: str) -> bool:
    word = word.lower()
    if "-" in word and word not in JOBS:  # "sous-chef", "part-time-nurse": the last part names the job
        word = word.rsplit("-", 1)[1] or word
    if word in NOT_JOB_COMPOUNDS:
        return False
    return (
        word in JOBS
        or (len(word) > 6 and word.endswith(JOB_ENDINGS))
        or (len(word) > 5 and word.endswith("ist") and word not in NOT_JOB_IST)
        or (len(word) >= 8 and word.endswith(_JOB_SUFFIXES))
    )
