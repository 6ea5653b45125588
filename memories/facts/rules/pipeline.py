"""The rule extractor: each committed user message is normalised, split into clauses, and each clause
read by the rules in registry order, then by the appositions and the pairs of clauses; the whole message
may then take facts back (a correction, a joke) or add some (a sign-off, a signature, a profile line).
Works offline and never calls a model. Only what the user said is ever given to it: never what the
assistant or the instructions say.
"""

from __future__ import annotations

from memories.facts.base import Candidate, UserMessage

from .clauses import MAX_CLAUSE, clauses
from .corrections import _CORRECTION, _RESPELT_CUE, MAX_CORRECTED, _accents_restored, _corrected
from .fragments import CODE_SWITCH_GATE, DETERMINERS, FRAMES, HEDGES
from .lexicons import NOT_NAMES, NOT_PLACE_WORDS
from .message import _FORWARDED, _JOKE_END, _LAUGH_START, _NOT_JOKING, _SIGN_OFF, _bar_card, _signature
from .openers import _WORK_IN, _opening_role
from .pairs import _ASKED, _DECEASED, NEGATIONS, _answer, pair_facts
from .registry import APPOSITIONS, RULES
from .rule import Rule, _openings
from .values import _name, _work_place


def _add(
    found: list[Candidate], said: set, slots: set[str], message: UserMessage, built, confidence: float
) -> None:
    """Append what a build returned (one (slot, text) or a list of them), one fact per slot and clause."""
    for slot, text in [built] if isinstance(built, tuple) else built:
        if slot and slot in slots or (message.seq, slot, text) in said:
            continue  # one fact per slot and clause, and the same fact once per message
        said.add((message.seq, slot, text))
        slots.add(slot)
        found.append(
            Candidate(
                text=text,
                slot=slot,
                confidence=confidence,
                source_entry_ids=[message.entry_id],
                source_seq=message.seq,
            )
        )


def _one_per_slot(found: list[Candidate]) -> list[Candidate]:
    """One message's facts with one per slot: the surest, and of equally sure ones the last said. The fact
    store keeps one fact per slot and message (the first it is given), so "luthier in Cuenca. Actually I moved
    to Valencia" must give Valencia (a stated home, 0.9, over a work place, 0.75), and "I live in Oslo and
    work in Bergen" Oslo."""
    best: dict[str, int] = {}
    for i, c in enumerate(found):
        if c.slot and (c.slot not in best or c.confidence >= found[best[c.slot]].confidence):
            best[c.slot] = i
    return [c for i, c in enumerate(found) if not c.slot or best[c.slot] == i]


class RuleExtractor:
    name = "rules"

    def extract(self, messages: list[UserMessage]) -> list[Candidate]:
        found: list[Candidate] = []
        said: set[tuple] = set()  # (seq, slot, text) already found
        for message in messages:
            start = len(found)
            if _LAUGH_START.match(message.text) or _FORWARDED.search(message.text, 0, 2000):
                continue  # a forwarded email is someone else's words
            self._message(message, found, said)
            if len(message.text) <= MAX_CORRECTED and (fix := _CORRECTION.search(message.text)):
                found[start:] = _corrected(self, message, fix, found[start:])
            if (joke := _JOKE_END.search(tail := message.text[-40:])) and not _NOT_JOKING.search(
                tail[: joke.start()]
            ):
                del found[start:]  # "I'm Batman 🦇 jk": the message takes itself back
                continue
            if (
                (sign := _SIGN_OFF.search(message.text[-80:]))
                and sign.group(1).split()[0].lower() not in NOT_NAMES | DETERMINERS
                and not any(w.lower() in NOT_PLACE_WORDS for w in sign.group(1).split())
                and (built := _name(sign))
                and not FRAMES.search(message.text)
            ):
                _add(found, said, {c.slot for c in found[start:]}, message, built, 0.75)
            if (signed := _signature(message.text) or _bar_card(message.text)) and not FRAMES.search(
                message.text
            ):
                for (
                    built
                ) in signed:  # one per slot: `_one_per_slot` below keeps a surer fact of the same slot
                    _add(found, said, set(), message, built, 0.7)
            if len(message.text) <= MAX_CORRECTED and _RESPELT_CUE.search(message.text):
                found[start:] = _accents_restored(message, found[start:])
            found[start:] = _one_per_slot(found[start:])
        return found

    def _message(self, message: UserMessage, found: list[Candidate], said: set[tuple]) -> None:
        """Append the facts of one message to `found`."""
        previous = asked = ""
        code_switched = bool(CODE_SWITCH_GATE.search(message.text))
        needs_met: dict[Rule, bool] = {}  # each rule's `needs` read once per message, not once per clause
        slots: set[str] = set()
        for n, (clause, statement_ok) in enumerate((c, not q) for c, q in clauses(message.text)):
            named, slots = slots == {"name"}, set()  # the clause before gave the user's name and nothing else
            before, previous = previous, clause if statement_ok else ""
            heading, asked = asked, ((m := _ASKED.fullmatch(clause)) and m.group(1).lower()) or ""
            if not statement_ok or len(clause) > MAX_CLAUSE:
                continue
            if heading and (answer := _answer(heading, clause)):
                _add(found, said, set(), message, answer, 0.75)
                continue

            def add(built, confidence: float, slots=slots, message=message) -> None:
                _add(found, said, slots, message, built, confidence)

            openings = _openings(clause)
            for rule in RULES:
                for start in openings:
                    if match := rule.body.match(clause, start):
                        break
                if not match:
                    continue
                # A hedge before the statement ("maybe I'll move to…") makes it no statement.
                if HEDGES.search(clause[: match.start(match.lastindex or 1)]):
                    continue
                if rule.needs:
                    if rule not in needs_met:
                        needs_met[rule] = bool(rule.needs.search(message.text))
                    if not needs_met[rule]:
                        continue
                built = rule.build(match)
                if not built:
                    continue
                add(built, rule.confidence)
                if rule.alone:
                    break
            opening = n == 0 or named  # "The name's Okechukwu. Metallurgist at BUA Sugar, based in Obajana"
            if opening and not slots and (role := _opening_role(clause, message.text)):
                add(
                    role, 0.7
                )  # "goldsmith with my own little workshop in Eger", "pescatarian, though I cheat"
            if slots & {"job", "employer"} and "location" not in slots and (where := _WORK_IN.search(clause)):
                if where.group(1) is None and (built := _work_place(where, 2, scoped=True)):
                    add(built, 0.7)  # "I'm a projectionist at the old cinema in Lappeenranta"
            for rule in APPOSITIONS:
                if rule.gated and not code_switched:
                    continue
                for match in rule.regex.finditer(clause):
                    head = clause[: match.start()]
                    if NEGATIONS.search(head) or FRAMES.search(head) or HEDGES.search(head):
                        break
                    if _DECEASED.match(clause, match.end()):
                        continue  # "our old dog Dougal passed away": no longer the user's
                    built = rule.build(match)
                    if built:
                        add(built, rule.confidence)
            pair_facts(before, clause, add)
