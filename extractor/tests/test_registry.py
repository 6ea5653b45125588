"""The rule package's data: its word lists are clean data files, and its registry lists every rule once,
each saying what it extracts and whether it ends the search."""

from __future__ import annotations

from pathlib import Path

import factrules
import pytest
from factrules import lexicons, registry
from factrules.rule import Apposition, Rule

LEXICONS = sorted((Path(lexicons.__file__).parent / "lexicons").glob("*.txt"))
SLOTS = {
    "name",
    "location",
    "origin",
    "job",
    "employer",
    "family",
    "pet",
    "plan",
    "age",
    "birthday",
    "diet",
    "allergy",
    "preference",
    "favorite",
    "",
}


@pytest.mark.parametrize("path", LEXICONS, ids=lambda p: p.name)
def test_each_word_list_holds_each_entry_once_without_blank_or_padded_lines(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and all(line and line == line.strip() for line in lines)
    assert len(lines) == len(set(lines))


def test_a_job_noun_is_listed_once_across_the_job_lists():
    assert not lexicons._words("jobs") & lexicons._words("jobs_whole_word")
    assert lexicons.JOBS == lexicons._words("jobs") | lexicons._words("jobs_whole_word")


def test_the_openers_are_read_in_file_order():
    assert factrules.FILLER.startswith("^(?:(?i:" + "|".join(lexicons.OPENERS[:3]) + "|")


def test_every_registered_rule_is_listed_once_and_says_its_slot_and_whether_it_is_alone():
    assert len({id(r) for r in registry.RULES}) == len(registry.RULES)
    assert len({id(a) for a in registry.APPOSITIONS}) == len(registry.APPOSITIONS)
    assert all(isinstance(r, Rule) and r.slot in SLOTS and isinstance(r.alone, bool) for r in registry.RULES)
    assert all(isinstance(a, Apposition) and a.slot in SLOTS for a in registry.APPOSITIONS)


def test_a_rule_must_say_its_slot_and_whether_it_is_alone():
    with pytest.raises(TypeError):
        Rule(r"(?i:I\s+live\s+in)\s+(\w+)", lambda m: ("location", m.group(1)))
