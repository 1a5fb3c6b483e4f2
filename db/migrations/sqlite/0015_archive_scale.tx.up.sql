-- A paper's citations, newest or oldest first, were read by joining every
-- paper citing it to papers and sorting them all to keep a page: the most
-- cited paper of the 2.7-million-paper synthetic archive has 24,281
-- citations, all read and sorted for a page of them. paper_references now
-- carries the citing paper's first-version date (the writer keeps it
-- equal to papers.published), and its cited index is in that order, so a
-- page is a range of the index, as a category's has been since 0013.
ALTER TABLE paper_references ADD COLUMN citing_published TIMESTAMP;
--bun:split
-- The old index goes first, so that the update does not maintain it. A
-- bulk load left open (see db/bulk.go) holds its old definition: the
-- index is built here instead, and the load's end leaves it.
DROP INDEX IF EXISTS paper_references_cited;
--bun:split
DELETE FROM bulk_load WHERE name = 'paper_references_cited';
--bun:split
UPDATE paper_references SET citing_published = (SELECT p.published FROM papers AS p WHERE p.id = paper_references.citing_id);
--bun:split
CREATE INDEX paper_references_cited ON paper_references (cited_id, citing_published, citing_id);

-- A category's totalCount counted its range of the category index: 719,277
-- entries for the largest category at 2.7 million synthetic papers. The
-- writer now keeps each category's count as it files and unfiles papers.
--bun:split
ALTER TABLE categories ADD COLUMN paper_count BIGINT NOT NULL DEFAULT 0;
--bun:split
UPDATE categories SET paper_count = c.n
FROM (SELECT category, COUNT(*) AS n FROM paper_categories GROUP BY category) AS c
WHERE c.category = categories.code;
