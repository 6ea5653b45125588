"""factrules: a rule-based extractor of the facts people state about themselves in chat ("I'm Ana, a nurse
in Oslo", "allergic to peanuts"). Works offline, never calls a model, depends on nothing but the standard
library.

    from factrules import UserMessage, extract

    extract([UserMessage(entry_id=1, seq=1, text="I'm Ana, a nurse in Oslo")])
    # [Candidate(text="User's name is Ana", slot="name", ...), ...]

One module per slot (name, place, work, family, pets, plans, age, health, preferences, notes) exports its
rules; `registry` holds the order they are tried in, and the stages around them are `normalize`, `clauses`,
`corrections`, `message` and `pipeline`. The word lists are data files under `lexicons/`; `score` is how an
extractor is scored on labelled lines.
"""

from .candidate import Candidate, UserMessage
from .clauses import MAX_CLAUSE, clauses
from .corrections import MAX_CORRECTED
from .fragments import FILLER
from .normalize import normalize
from .pipeline import extract
from .registry import APPOSITIONS, RULES

__version__ = "0.1.0"

__all__ = [
    "APPOSITIONS",
    "FILLER",
    "MAX_CLAUSE",
    "MAX_CORRECTED",
    "RULES",
    "Candidate",
    "UserMessage",
    "clauses",
    "extract",
    "normalize",
]
