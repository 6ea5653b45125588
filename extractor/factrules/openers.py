"""What the first clause of a message says when it opens with the user's role or diet and no rule read it
("goldsmith with my own little workshop in Eger", "pescatarian, though I cheat"), and the place a work clause
names as the user's location.
"""

from __future__ import annotations

import re

from .clauses import MAX_CLAUSE, SENTENCE
from .fragments import DETERMINERS, DIETS, FILLER, FRAMES, PLACE, WHEN_WORDS
from .rule import Groups
from .values import is_job_part, job_fact

# The place a clause that gave the user's job or employer names ("I'm an osteopath at Reddington in
# Ijebu-Ode", "goldsmith with my own little workshop in Eger"), unless it says where the user was born,
# studied or lived before.
WORK_IN = re.compile(
    r"(?:((?<![^\W\d_])(?i:born|raised|up|studied|trained|qualified|lived|stayed|was|were|used\s+to\s+\w+|me|him|her|them|family|friends))"
    r"\s+)?(?<![^\W\d_])(?i:in|near|outside|around|just\s+outside)\s+"
    + PLACE
    + r"(?=\s*(?:$|[,.!;\-–—(])|\s+(?i:and|but|now|so|as|these\s+days|since|for\s+now|lol|haha)\b)"
)
# A message that opens with the user's job or diet and no verb ("conservator at the film archive in Zlín",
# "bailiff, 22 yrs on the job", "professional thatcher, about 40 roofs a year", "halal only for me please");
# not a sentence about someone of that trade ("nurse at the desk was rude", "plumber in Leeds needed") or for
# someone else.
_OPENING_ROLE = re.compile(
    FILLER + r"((?:[A-Za-z\-]+\s+){0,3}?[A-Za-z\-]+)(?=\s*+(?:$|[,.!;])|\s+(?i:with|at|in|for|by\s+day|"
    r"by\s+night|by\s+trade|near|outside|around|since|because|though|only|now|here|btw|lol)\b)"
)
_NOT_OWN_ROLE = re.compile(
    r"(?i)\b(?:is|was|are|were|said|says|told|tells|asked|asks|wants?|needs?|needed|wanted|required|"
    r"recommend\w*|looking|hire|hiring|find|search\w*|called|thinks?|came|comes?|keeps?|did|does|has|had|"
    r"gave|his|her|their|sister|brother|wife|husband|mum|mom|dad|son|daughter|kids?|friends?|guests?|people|options?|recipes?|menu|meals?|dish(?:es)?|"
    r"anyone|someone|wanted|jobs?|vacanc\w*|course|degree|school|appointment|today|tonight|tomorrow|luck|"
    r"\d{1,2}(?::\d\d)?\s*(?:am|pm)|o'clock|who|what|where|when|how|why|then|gave|quit|stopped|anymore|longer|used|minutes?|hours?|days?|"
    r"won't|wouldn't|can't|didn't|doesn't|don't|isn't|wasn't|" + WHEN_WORDS + r")\b"
    r"|(?<![^\W\d_])(?!(?i:based|retired|employed|qualified|trained|licensed|certified|registered|skilled|"
    r"experienced|married|red|bed|shed)\b)[a-z]{2,}ed\b"
)  # "Manager at Tesco refused my refund"
_ROLE_ADDRESSED = re.compile(r"(?i)\b(?:please|help|can|could|would|thanks|thank)\b")  # "Nurse, please help"
_PAST_RANGE = re.compile(r"\b(?:19|20)\d\d\s*+(?:[-–—]|to)\s*+(?:19|20)?\d\d\b")


def opening_role(clause: str, message: str):
    """`_OPENING_ROLE`'s note; the message's first sentence is read for what makes it no statement of the
    user's ("Vegetarian for a few years, then I gave it up" is cut into clauses before this)."""
    if not (m := _OPENING_ROLE.match(clause)) or FRAMES.search(clause):
        return None
    if _NOT_OWN_ROLE.search(SENTENCE.split(message[:MAX_CLAUSE], 1)[0]):
        return None
    if _PAST_RANGE.search(clause):
        return None  # "Senior Accountant, Deloitte (2015–2019)" is a past job
    if any(w.lower() in DETERMINERS | {"as", "to", "of", "i", "we", "you"} for w in m.group(1).split()):
        return None  # "roleplay as my landlord", "I cook for my family"
    role = re.sub(r"^(?i:professional|full[\s\-]time|part[\s\-]time|freelance)\s+", "", m.group(1))
    if role.lower() in DIETS:
        return "diet", f"User is {role.lower()}"
    if _ROLE_ADDRESSED.search(clause) or not re.match(r"\s*+,|\s++\S", clause[m.end(1) :]):
        return None  # a job alone ("Doctor. Who?") is `_bare_job`'s, which reads the whole message
    return job_fact(Groups(role.lower())) if is_job_part(role) else None
