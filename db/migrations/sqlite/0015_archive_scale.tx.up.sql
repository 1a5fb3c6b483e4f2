-- A paper's citations, newest or oldest first, were read by joining every
-- paper citing it to papers and sorting them all to keep a page: the most
-- cited paper of the 2.7-million-paper synthetic archive has 24,281
-- citations, and its page took 385–435 ms on SQLite. paper_references now
-- carries the citing paper's first-version date (the writer keeps it
-- equal to papers.published), and its cited index is in that order, so a
-- page is a range of the index, as a category's has been since 0013.
ALTER TABLE paper_references ADD COLUMN citing_published TIMESTAMP;
--bun:split
UPDATE paper_references SET citing_published = (SELECT p.published FROM papers AS p WHERE p.id = paper_references.citing_id);
--bun:split
-- A bulk load left open (see db/bulk.go) holds the old definition: the
-- index is built here instead, and the load's end leaves it.
DROP INDEX IF EXISTS paper_references_cited;
--bun:split
DELETE FROM bulk_load WHERE name = 'paper_references_cited';
--bun:split
CREATE INDEX paper_references_cited ON paper_references (cited_id, citing_published, citing_id);

-- A paper's archive citation count is its citations' totalCount now, so it
-- counts each citing paper once, as the list does: the papers that a paper
-- cites by two targets are counted again by the next derive (migrate runs it).
--bun:split
INSERT INTO derive_papers (paper_id)
SELECT DISTINCT cited_id FROM paper_references WHERE cited_id IS NOT NULL
GROUP BY cited_id, citing_id HAVING COUNT(*) > 1
ON CONFLICT DO NOTHING;

-- A category's totalCount counted its range of the category index: 719,277
-- entries for the largest category at 2.7 million synthetic papers. The
-- writer now keeps each category's count as it files and unfiles papers.
--bun:split
ALTER TABLE categories ADD COLUMN paper_count BIGINT NOT NULL DEFAULT 0;
--bun:split
UPDATE categories SET paper_count = (SELECT COUNT(*) FROM paper_categories AS pc WHERE pc.category = categories.code);
