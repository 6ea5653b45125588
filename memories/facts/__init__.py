"""Fact extraction: what the user said about themselves, turned into short durable statements.

Extractors read committed USER messages only (never instructions, recalled snippets, digests,
uncommitted entries or the assistant's words) and propose `Candidate`s; `store.facts_apply`
de-duplicates them, lets newer statements supersede older ones on the same slot, and never
overrides what a person edited or deleted through the API or the console.
"""

from memories.facts.base import Candidate, Extractor, RuleExtractor, UserMessage

__all__ = ["Candidate", "Extractor", "RuleExtractor", "UserMessage"]
