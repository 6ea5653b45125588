"""What a rule is: `Rule`, a pattern that must open its clause, and `Apposition`, a possessive read
anywhere in a statement; and `rule_openings`, where a rule's own pattern may start once the words a
statement opens with are read.
"""

from __future__ import annotations

import re

from .fragments import FILLER
from .lexicons import OPENERS


class Rule:
    """A pattern that must open its clause. `slot`: the kind of fact it gives first ("name", "location",
    "job", …; a build may add facts of other slots). `alone`: when it gives a fact, no later rule is tried
    on the clause; a rule whose clause may say more is not alone ("I'm a nurse at Siemens" says a job and
    an employer).
    `needs`: the rule counts only when the whole message matches this too ("it's Ömer, not Ayşe"
    is a name only in a message about the user's name). `build` returns (slot, text), a list of
    them, or None."""

    def __init__(
        self,
        pattern: str,
        build,
        confidence: float = 0.85,
        needs: str | None = None,
        *,
        slot: str,
        alone: bool,
    ):
        self.regex = re.compile(FILLER + pattern)
        self.body = re.compile(
            pattern
        )  # matched at each of `rule_openings` (the same result, FILLER read once)
        self.build = build
        self.confidence = confidence
        self.slot = slot
        self.alone = alone
        self.needs = re.compile(needs) if needs else None


_FILLER_WORDS = "|".join(OPENERS)
_FILLER_ONE = [re.compile(rf"(?i:{a})[,!.:\-–]*\s+") for a in OPENERS]
_FILLER_ANY = re.compile(rf"(?i:{_FILLER_WORDS})[,!.:\-–]*\s+")


def rule_openings(clause: str) -> list[int]:
    """Where a rule's own pattern may start, in the order `FILLER + pattern` tries them (its greedy
    star: deepest run of openers first, each opener in FILLER's order). Each position is walked
    once, so this is linear in the clause."""
    if not _FILLER_ANY.match(clause):
        return [0]
    order: list[int] = []
    seen: set[int] = set()
    stack = [(0, 0)]  # (position, index of the next opener to try there)
    seen.add(0)
    while stack:
        pos, k = stack.pop()
        while k < len(_FILLER_ONE):
            m = _FILLER_ONE[k].match(clause, pos)
            k += 1
            if m and m.end() not in seen:
                seen.add(m.end())
                stack.append((pos, k))
                stack.append((m.end(), 0))
                break
        else:
            order.append(pos)
    return order


class Apposition:
    """ "my KIND Name" anywhere in a statement ("…in Bilbao with my parrot Nacho"): the possessive
    names the user's own pet or relative whatever the clause's verb, unless a negation, frame or
    hedge comes before it. `slot`: the kind of fact it gives first. `gated`: read only in a message that
    `CODE_SWITCH_GATE` finds (one search per message instead of one per apposition and clause)."""

    def __init__(self, pattern: str, build, confidence: float = 0.8, *, slot: str, gated: bool = False):
        self.regex = re.compile(pattern)
        self.build = build
        self.confidence = confidence
        self.slot = slot
        self.gated = gated


class Groups:
    """A stand-in match for a build that takes its groups in another order."""

    def __init__(self, *groups: str):
        self.groups_ = groups

    def group(self, i: int) -> str:
        return self.groups_[i - 1]
