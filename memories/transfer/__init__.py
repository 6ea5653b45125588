"""Export and import of one memory as a versioned JSON Lines document (docs/deployment.md,
"Export and import").

The document is one JSON object per line, each with a `type`:

    header          {"type": "header", "format": "threadless.memory", "version": 2, "exported_at", "source"}
    memory          the memory's own fields (metadata, instructions, policy, summary, counters:
                    the default thread's turn counters and summary are the memory's)
    thread          a named thread, by name (turn counters, rolling summary, times)
    turn            one per turn, with its thread (state, input, actions, task errors, timings)
    entry           one per entry, in seq order, with its thread (kind, role, content or parts,
                    tool calls, commit flag, tokens, created_at: when it was said)
    digest          an error digest, with its thread, tied to its entry by `entry_seq`
    fact            a fact with its provenance (`source_entry_seqs`), history (`superseded_by`)
                    and when it held (`valid_from`, `valid_to`)
    fact_tombstone  a statement a person removed (extraction must not bring it back)
    file            a memory file or directory under /memories, by path (content, version, who
                    changed it, times), in path order so a folder comes before what it holds
    file_version    a content a change replaced (kept for the console), deleted files' included
    end             {"type": "end", "records": n, "sha256": <hex of every line before it>}

Entries and facts refer to each other by sequence number and exported fact id, never by a
database id, so a document moves between installs. A new kind of record is a new `type` with an
exporter (`exporting.EXPORTERS`), field rules (`rules`) and an importer (`document.IMPORTERS`); a
reader refuses a type it does not know and a `version` newer than its own, rather than drop part
of a memory. Version 2 added threads (the `thread` record, `thread` on turns,
entries and digests) and facts' `valid_from`/`valid_to`; a version 1 document has none of them and
imports as it was exported, every row in the default thread.

The modules, in the order a document passes through them:

    format      the format's name and version and each record's fields (both directions)
    exporting   memory_export: the memory's rows as the document's lines, read in bounded chunks
    reading     the lines as records: size, depth, header, the end record's count and digest
    rules       each field's rule (the API's own where it has one)
    document    each record checked and turned into rows, then the links between records
    rows        those rows as the parameters of multi-row INSERTs
    importing   memory_import: the checked document written in one short transaction

Export streams: rows are read in chunks in seq order, so a memory of any size is written in
bounded memory. Import reads and checks the whole document first (each field by the API's rule
for it, the `end` record's count and digest, the links between records), with nothing written
and no lock taken, then writes it in one short transaction: a truncated, damaged, newer or
malformed document leaves nothing behind, and other writers wait for the write alone. An
imported memory counts against the plan's allowance like any other. Importing the same document
again into the same project returns the memory the first import made (keyed by the document's
digest).
"""

from memories.transfer.exporting import memory_export
from memories.transfer.format import FORMAT, VERSION
from memories.transfer.importing import memory_import

__all__ = ["FORMAT", "VERSION", "memory_export", "memory_import"]
