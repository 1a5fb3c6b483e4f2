-- A paper's citations, newest or oldest first, were read by joining every
-- paper citing it to papers and sorting them all to keep a page: the most
-- cited paper of the 2.7-million-paper synthetic archive has 24,281
-- citations, all read and sorted for a page of them. paper_references now
-- carries the citing paper's first-version date (the writer keeps it
-- equal to papers.published), and its cited index is in that order, so a
-- page is a range of the index, as a category's has been since 0013.
ALTER TABLE paper_references ADD COLUMN citing_published TIMESTAMPTZ;
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

-- Suggestions match titles alone, and the full-text index cannot tell a
-- title's words from an abstract's (a GIN index keeps no weights): the
-- most cited titles matching a prefix were read by walking papers in
-- citation order, which for a prefix of no title walked the whole archive
-- and at the archive's full size ran past the request deadline.
-- papers.title_doc holds the title's words alone, filled by the
-- trigger that fills search_doc, with its own GIN index: a prefix few
-- titles have is read from that index (see SuggestPapers), and its
-- statistics are the titles'.
--bun:split
ALTER TABLE papers ADD COLUMN title_doc tsvector;
--bun:split
UPDATE papers SET title_doc = ts_filter(search_doc, '{a}');
--bun:split
CREATE OR REPLACE FUNCTION papers_search_doc_fill() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN
			NEW.search_doc := papers_search_vector(NEW.title, NEW.abstract);
			NEW.title_doc := ts_filter(NEW.search_doc, '{a}');
			RETURN NEW;
		END $$;
--bun:split
CREATE INDEX papers_title_doc ON papers USING GIN (title_doc);

-- A category's totalCount counted its range of the category index: 719,277
-- entries for the largest category at 2.7 million synthetic papers. The
-- writer now keeps each category's count as it files and unfiles papers.
--bun:split
ALTER TABLE categories ADD COLUMN paper_count BIGINT NOT NULL DEFAULT 0;
--bun:split
UPDATE categories SET paper_count = c.n
FROM (SELECT category, COUNT(*) AS n FROM paper_categories GROUP BY category) AS c
WHERE c.category = categories.code;
