"""The rule-based fact extractor for plain first-person statements, organised by what it extracts: one module
per slot (name, place, work, family, pets, plans, age, health, preferences, notes) exporting its rules, the
order they are tried in (registry), and the stages around them (normalize, clauses, corrections, message,
pipeline). Works offline and never calls a model.
"""

from .clauses import MAX_CLAUSE, clauses
from .corrections import MAX_CORRECTED
from .fragments import FILLER
from .normalize import normalize
from .pipeline import RuleExtractor
from .registry import APPOSITIONS, RULES

__all__ = [
    "APPOSITIONS",
    "FILLER",
    "MAX_CLAUSE",
    "MAX_CORRECTED",
    "RULES",
    "RuleExtractor",
    "clauses",
    "normalize",
]
