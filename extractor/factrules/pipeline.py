"""The rule extractor: each committed user message is normalised, split into clauses, and each clause
read by the rules in registry order, then by the appositions and the pairs of clauses; the whole message
may then take facts back (a correction, a joke) or add some (a sign-off, a signature, a profile line).
Works offline and never calls a model. Only what the user said is ever given to it: never what the
assistant or the instructions say.
"""

from __future__ import annotations

from .candidate import Candidate, UserMessage
from .clauses import MAX_CLAUSE, clauses
from .corrections import CORRECTION, MAX_CORRECTED, RESPELT_CUE, accents_restored, corrected
from .fragments import CODE_SWITCH_GATE, DETERMINERS, FRAMES, HEDGES
from .lexicons import NOT_NAMES, NOT_PLACE_WORDS
from .message import FORWARDED, JOKE_END, LAUGH_START, NOT_JOKING, SIGN_OFF, bar_card_facts, signature_facts
from .openers import WORK_IN, opening_role
from .pairs import ASKED, DECEASED, NEGATIONS, answer_fact, pair_facts
from .registry import APPOSITIONS, RULES
from .rule import Rule, rule_openings
from .values import name_fact, work_place_fact


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


def extract(messages: list[UserMessage]) -> list[Candidate]:
    """The facts the user states about themselves in `messages`, in order; each candidate names the
    message it came from. Messages are read one by one; nothing is kept between calls."""
    found: list[Candidate] = []
    said: set[tuple] = set()  # (seq, slot, text) already found
    for message in messages:
        start = len(found)
        if LAUGH_START.match(message.text) or FORWARDED.search(message.text, 0, 2000):
            continue  # a forwarded email is someone else's words
        read_message(message, found, said)
        if len(message.text) <= MAX_CORRECTED and (fix := CORRECTION.search(message.text)):
            found[start:] = corrected(read_message, message, fix, found[start:])
        if (joke := JOKE_END.search(tail := message.text[-40:])) and not NOT_JOKING.search(
            tail[: joke.start()]
        ):
            del found[start:]  # "I'm Batman 🦇 jk": the message takes itself back
            continue
        if (
            (sign := SIGN_OFF.search(message.text[-80:]))
            and sign.group(1).split()[0].lower() not in NOT_NAMES | DETERMINERS
            and not any(w.lower() in NOT_PLACE_WORDS for w in sign.group(1).split())
            and (built := name_fact(sign))
            and not FRAMES.search(message.text)
        ):
            _add(found, said, {c.slot for c in found[start:]}, message, built, 0.75)
        if (signed := signature_facts(message.text) or bar_card_facts(message.text)) and not FRAMES.search(
            message.text
        ):
            for built in signed:  # one per slot: `_one_per_slot` below keeps a surer fact of the same slot
                _add(found, said, set(), message, built, 0.7)
        if len(message.text) <= MAX_CORRECTED and RESPELT_CUE.search(message.text):
            found[start:] = accents_restored(message, found[start:])
        found[start:] = _one_per_slot(found[start:])
    return found


def read_message(message: UserMessage, found: list[Candidate], said: set[tuple]) -> None:
    """Append the facts of one message to `found`."""
    previous = asked = ""
    code_switched = bool(CODE_SWITCH_GATE.search(message.text))
    needs_met: dict[Rule, bool] = {}  # each rule's `needs` read once per message, not once per clause
    slots: set[str] = set()
    for n, (clause, statement_ok) in enumerate((c, not q) for c, q in clauses(message.text)):
        named, slots = slots == {"name"}, set()  # the clause before gave the user's name and nothing else
        before, previous = previous, clause if statement_ok else ""
        heading, asked = asked, ((m := ASKED.fullmatch(clause)) and m.group(1).lower()) or ""
        if not statement_ok or len(clause) > MAX_CLAUSE:
            continue
        if heading and (answer := answer_fact(heading, clause)):
            _add(found, said, set(), message, answer, 0.75)
            continue

        def add(built, confidence: float, slots=slots, message=message) -> None:
            _add(found, said, slots, message, built, confidence)

        openings = rule_openings(clause)
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
        if opening and not slots and (role := opening_role(clause, message.text)):
            add(role, 0.7)  # "goldsmith with my own little workshop in Eger", "pescatarian, though I cheat"
        if slots & {"job", "employer"} and "location" not in slots and (where := WORK_IN.search(clause)):
            if where.group(1) is None and (built := work_place_fact(where, 2, scoped=True)):
                add(built, 0.7)  # "I'm a projectionist at the old cinema in Lappeenranta"
        for rule in APPOSITIONS:
            if rule.gated and not code_switched:
                continue
            for match in rule.regex.finditer(clause):
                head = clause[: match.start()]
                if NEGATIONS.search(head) or FRAMES.search(head) or HEDGES.search(head):
                    break
                if DECEASED.match(clause, match.end()):
                    continue  # "our old dog Dougal passed away": no longer the user's
                built = rule.build(match)
                if built:
                    add(built, rule.confidence)
        pair_facts(before, clause, add)
