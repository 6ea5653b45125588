"""Recall: search over a memory's committed messages, lexical and (with an embedding provider) by
meaning, behind one interface.

* `index` — index maintenance: `index_entries`, `unindex_entries`, `forget_memory`, `count_rows`.
* `query` — what a query asks: its terms, dates, and whether it asks "when" or for a list.
* `Filters` — what a search may be narrowed to (role, a span of times), as conditions of its reads.
* `search` — the ranked snippets (and, when asked, the facts ranked with them: `facts`), in
  stages: `reads` (bounded reads of candidates), `lexical`
  (BM25, neighbours, corrections), `dense` (the nearest vectors), `selection` (weights, day prior,
  distinct texts, rerank), `snippets` (what a hit shows).
* `Ranking` — the tuned parameters, one frozen object; `RANKING` is the default.

Decorate asks for the top few matches outside the window: nothing here ranks the whole memory in
Python, and nothing here calls a model. A search costs a bounded number of index reads (the bound
is in `search.py`) plus, with a query vector, one pass over the memory's codes held in the process
and a bounded number of float rows (memories/embeddings/search.py): decorate stays O(window) + that scan.
"""

from memories.recall.filters import NO_FILTERS, Filters
from memories.recall.hits import Hit, Message
from memories.recall.index import count_rows, forget_memory, index_entries, unindex_entries
from memories.recall.query import STOPWORDS, query_terms
from memories.recall.ranking import RANKING, Ranking
from memories.recall.search import search

__all__ = [
    "NO_FILTERS",
    "RANKING",
    "STOPWORDS",
    "Filters",
    "Hit",
    "Message",
    "Ranking",
    "count_rows",
    "forget_memory",
    "index_entries",
    "query_terms",
    "search",
    "unindex_entries",
]
