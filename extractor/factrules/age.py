"""Rules that extract the user's age and birthday."""

from __future__ import annotations

import re

from .fragments import NOT_LETTER_BEFORE, OTHER_HEAD, REST
from .rule import Apposition, Groups, Rule
from .values import age_fact, job_fact, someone_else_before


def _birthday(m):
    day = m.group(1).strip().rstrip(".")
    if not re.search(r"\d", day) or len(day.split()) > 5:
        return None
    return "birthday", f"User's birthday is {day}"


def _age_and_job(m):
    """ "I'm 27, a software developer, …": the age, and the job when it is one."""
    found = [("age", f"User is {m.group(1)} years old")]
    if m.group(2) and (job := job_fact(Groups(m.group(2)))):
        found.append(job)
    return found


def _age_job(m):
    found = [("age", f"User is {m.group(1)} years old")]
    if job := job_fact(Groups(m.group(2))):
        found.append(job)
    return found


_REPORTED = re.compile(r"\b(?:said|says|told|tells|asked|asks|according|wrote|quoted)\b", re.IGNORECASE)


def _age_comma(m):
    """ "I'm 41, if that matters": the age, unless the rest reports someone's words ("I'm 5, said my son")."""
    return None if _REPORTED.search(m.string, m.end()) else age_fact(m)


_FOREIGN_AGE_CUES = (
    r"(?:(\d{1,3})\s+(?i:tuổi|yaşındayım|yasindayim|yaşında|taong\s+gulang|na\s+taong\s+gulang)|"
    r"(?i:mam|tengo|j'ai|ho|tenho|nina\s+miaka|umri\s+wangu\s+ni|ég\s+er|jeg\s+er|jag\s+är|ich\s+bin)\s+(\d{1,3})\s+"
    r"(?i:lat[a]?|años|anos|ans|anni|ára|år|jahre(?:\s+alt)?)|(?i:nina\s+miaka|umri\s+wangu\s+ni)\s+(\d{1,3}))"
)


def _foreign_age(m):
    age = next(g for g in m.groups() if g)
    return (
        0 < int(age) < 120
        and not OTHER_HEAD.search(m.string, 0, m.start())
        and ("age", f"User is {age} years old")
    )


_AGE_SUFFIX_CUES = (
    r"(?:(\d{1,2})[-\s]?(?i:sai|saai)|(?i:3omri|omri|umri)\s+(\d{1,2})|"
    r"(\d{1,2})\s+(?i:saal)(?:\s+(?i:ka|ki|ke))?(?=\s*(?:$|[,.!;])|\s+(?i:hoon|hun|hu|aur)\b)|"
    r"(?i:ik\s+ben|olen)\s+(\d{1,2})(?:\s+(?i:jaar(?:\s+oud)?|vuotta)|-vuotias)?(?=\s*(?:$|[,.!;])|\s+(?i:en|ja)\b)|"
    r"(\d{1,2})-(?i:vuotias|évesen|éves))"
)
_AGE_CUES = (
    r"(?:(?i:(?:ich\s+|i\s+)?bin|jeg\s+er|jag\s+är|eg\s+er)\s+(\d{1,2})(?=\s*+(?:$|[,.!;])|\s+(?i:und|og|och|jahre|år|ar)\b)|"
    r"(?i:je\s+mi|mam|mám|imam|am|tinc|teño|teno|man\s+ir|olen|ani\s+ben|ani\s+bat|eimai|jam)\s+(\d{1,2})\s+"
    r"(?i:let|lat|rokov|roků|roku|godina|godine|godinu|ani|anys|anos|gadi|gadu|aastat|chronon|chronia|xronon|xronia|vjeç|vjec)\b|"
    r"(?i:umur(?:\s+saya|ku)?|usia(?:\s+saya|ku)?)\s+(\d{1,2})(?:\s+(?i:tahun|thn))?\b|(\d{1,2})\s+(?i:tahun|thn)\b|"
    r"(\d{1,2})\s*+-?(?i:sal)(?:-?(?i:ieyo|iyeyo|imnida|ida|ida|iyeyo))?\b|(\d{1,2})\s*+(?i:sui|suì)\b|"
    r"(\d{1,2})\s+(?i:jahre\s+alt|jaar\s+oud|år\s+gammel|år\s+gammal|ans\s+et|urte\s+ditut|saalam|salame))"
)


def _cued_age(m):
    return not someone_else_before(m) and _foreign_age(m)


_LOWER_AGE_UNITS = (
    r"(?i:weeks?|days?|months?|hours?|hrs?|minutes?|mins?|seconds?|secs?|km|kms|miles?|percent|pages?|points?|"
    r"pounds?|lbs?|kg|kgs|kilos?|stone|cm|feet|ft|inches|in|of|out|times?|quid|bucks|dollars?|euros?|rupees?|grand|"
    r"k|episodes?|chapters?|levels?|games?|hands?|steps?|floors?|stops?|seats?|rows?|behind|ahead|down|up|short|over|"
    r"under|off|away|late|early|into|per|x|th|st|nd|rd|to|on|at|for|-|am|pm|o'clock|m|meters?|metres?|yards?|yds|mi|mph)"
)
BIRTHDAY = Rule(r"(?i:my\s+birthday\s+is(?:\s+on)?)\s+" + REST, _birthday, 0.9, slot="birthday", alone=True)
AGE_YEARS_OLD = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3})\s+(?i:years\s+old|yrs\s+old|year\s+old)",
    age_fact,
    0.9,
    slot="age",
    alone=True,
)
AGE_WITH_SEX = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,2})\s*+/?\s*+(?i:f|m)(?=\s*(?:$|[,.!;]))", age_fact, 0.8, slot="age", alone=True
)
AGE_WITH_UNIT = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3})\s*(?i:years?|yrs?|y/?o)(?:\s+(?i:old|of\s+age))?"
    r"(?=\s*(?:$|[,.!;])|\s+(?i:and|but|now|so|from|living|based|with|staying|residing|working)\b)",
    age_fact,
    0.85,
    slot="age",
    alone=True,
)
AGE_BARE_NUMBER = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3})\s*(?:[.!]?$|,\s+(?i:not)\s+\d{1,3}\b|\s+(?i:and|but|now|so)\s+(?!(?i:a\s+half|change|counting|"
    r"something|a\s+bit)\b))",
    age_fact,
    0.8,
    slot="age",
    alone=True,
)
AGE_AFTER_DESCRIPTION = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+(?:[a-zA-Z\-]+\s+){0,2}[a-z\-]+,\s+(\d{1,2})\s*(?:$|[,.!;])",
    age_fact,
    0.75,
    slot="age",
    alone=True,
)
AGE_AND_JOB = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3})(?:\s+(?i:years\s+old|yrs\s+old|yo))?,\s+(?:(?i:an?)\s+((?:[a-zA-Z\-]+\s+){0,3}[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;]|\s+(?:at|in|for|from)\b))|(?=(?i:from|married|single|living|based|originally)\b))",
    _age_and_job,
    0.8,
    slot="age",
    alone=True,
)
AGE_TURNED = Rule(
    r"(?i:I\s+(?:just\s+|recently\s+)?turned|I've\s+just\s+turned)\s+(\d{1,3})"
    r"(?=\s*(?:$|[,.!;]|\s+(?i:last|this|yesterday|today|on|in)\b))",
    age_fact,
    0.85,
    slot="age",
    alone=True,
)
AGE_YEAR_OLD_JOB = Rule(
    r"(?i:I'm|I\s+am)\s+(?i:an?)\s+(\d{1,3})[\s\-]*(?i:years?|yrs?|yo)[\s\-]*(?:(?i:old)\s+)?((?:[a-zA-Z\-]+\s+){0,2}?[a-z\-]+)"
    r"(?=\s*(?:$|[,.!;(])|\s+(?:at|in|for|with|from|and|but|so|lol|living|based)\b)",
    _age_job,
    0.8,
    slot="age",
    alone=True,
)
AGE_BEFORE_COMMA = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3}),\s+(?!\d|(?i:minutes?|mins?|hours?|seconds?|percent|miles?|km|feet|ft|cm|kg|lbs?|pounds?|"
    r"stone|days?|weeks?|months?|times?|or|and\s+a\s+half)\b)",
    _age_comma,
    0.75,
    slot="age",
    alone=True,
)
AGE_YEARS_OLD_NO_SUBJECT = Rule(
    r"(\d{1,3})\s*(?i:years?|yrs?)\s+(?i:old)(?=\s*(?:$|[,.!;])|\s+(?i:and|but|male|female|from|living|based)\b)",
    age_fact,
    0.75,
    slot="age",
    alone=True,
)
FIELD_AGE = Rule(r"(?i:age)\s*[:\-]?\s*(\d{1,3})\s*(?:$|[,.!;])", age_fact, 0.75, slot="age", alone=True)
# "I'm 71 years young": an age.
AGE_YEARS_YOUNG = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3})\s+(?i:years|yrs)\s+(?i:young)\b", age_fact, 0.8, slot="age", alone=True
)
# "I'm 37 not 38": the age, put right in place.
AGE_CORRECTED_IN_PLACE = Rule(
    r"(?i:I'm|I\s+am)\s+(\d{1,3}),?\s+(?i:not)\s+\d{1,3}(?=$|[\s,.!;])", age_fact, 0.8, slot="age", alone=True
)
# "im 38 divorsed no kids", "I'm 52 semi retired": an age before a word that is no unit ("I'm 5 minutes away"
# is none).
AGE_BEFORE_DESCRIPTION_WORD = Rule(
    r"(?i:I'm|I\s+am)\s+([1-9]\d)\s++(?!" + _LOWER_AGE_UNITS + r"(?![\w'\-]))(?=[a-z])",
    age_fact,
    0.7,
    slot="age",
    alone=True,
)
FOREIGN_AGE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _FOREIGN_AGE_CUES + r"(?=$|[\s,.!;])", _foreign_age, slot="age"
)
FOREIGN_AGE_SUFFIX_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _AGE_SUFFIX_CUES + r"(?=$|[\s,.!;])", _foreign_age, slot="age"
)
CUED_AGE_ANYWHERE = Apposition(
    NOT_LETTER_BEFORE + _AGE_CUES + r"(?=$|[\s,.!;])", _cued_age, slot="age", gated=True
)
