"""Full-text search (FTS5) of journal entries and summaries, scoped like reads (scope.py),
optionally fused with the vector ranking of the same scope. A package above the families:
it uses the journal and summaries families, and the store composes it into
`store.journal.search` and `store.summaries.search`; no family imports it.

query.py      what a person typed -> FTS5 terms (any text is a query, never FTS syntax)
snippets.py   the matched field's snippet and highlight spans, worked out on first use
fusion.py     text and vector rankings fused (reciprocal rank, CombSUM)
results.py    what a search returns: hits, scope, total, elsewhere
journal.py    searching entries: the scoped statement and its counts
summaries.py  searching summaries
index.py      checking and rebuilding the indexes (doctor)

The indexes and the triggers that keep them right are in schema.sql.
"""
