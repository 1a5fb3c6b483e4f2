-- A researcher's papers, newest or oldest first, were read by joining
-- every paper of theirs to papers and sorting them all to keep a page: the
-- most prolific researcher of the 2.7-million-paper synthetic archive has
-- 1,201 papers, and the README's first query read every paper of each
-- author of the paper it asks for. authorships now carries the paper's
-- first-version date (the writer keeps it equal to papers.published), and
-- the researcher index is in that order, so that a page is a range of it,
-- as a category's and a paper's citations are (0013, 0015).
ALTER TABLE authorships ADD COLUMN published TIMESTAMPTZ;
--bun:split
-- The old index goes first, so that the update does not maintain it. A
-- bulk load left open (see db/bulk.go) holds its old definition: the
-- index is built here instead, and the load's end leaves it.
DROP INDEX IF EXISTS authorships_researcher;
--bun:split
DELETE FROM bulk_load WHERE name = 'authorships_researcher';
--bun:split
UPDATE authorships SET published = p.published FROM papers AS p WHERE p.id = authorships.paper_id AND p.published IS NOT NULL;
--bun:split
CREATE INDEX authorships_researcher ON authorships (researcher_id, published, paper_id);
