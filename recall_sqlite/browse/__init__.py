"""`recall-sqlite browse`: this workspace's store in Datasette, read-only, on loopback.

No web code of our own: Datasette serves the file, and what a person sees is configured by
the metadata and the one template shipped with the package.

metadata.json  titles, descriptions, full-text search, facets, canned queries
templates/query-memory-timeline.html
               the timeline's page: Datasette's query page, the rows drawn as an SVG chart
cells.py       the one plugin a view needs: the journal's matching of next steps as SQL
               functions (the canned queries do not copy it), list columns as lists
serve.py       the file opened so the viewer never writes it and leaves nothing beside it;
               loopback unless told; Datasette's app on uvicorn
"""
