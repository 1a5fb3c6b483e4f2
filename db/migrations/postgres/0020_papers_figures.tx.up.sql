-- The derive reads, for every authorship of the researchers it
-- recomputes, its paper's author count, completeness, citations and date
-- (db.EachQueuedAuthorship, db.EachQueuedCoauthorship): read from the
-- table, each is a row of several kilobytes (title, abstract and their
-- search document) read for four small columns, the papers of a batch's
-- researchers scattered over the whole table. This index holds the four,
-- so that once the table is vacuumed those reads are index-only.
CREATE INDEX papers_figures ON papers (id) INCLUDE (author_count, authors_complete, citation_count, published);
