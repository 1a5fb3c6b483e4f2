-- The papers cited once have a band of their own (see db.citedBands and
-- SQLite's migration of the same number): the papers below the bands are
-- then those never cited.
SET LOCAL maintenance_work_mem = '512MB';
--bun:split
CREATE INDEX papers_search_cited_1 ON papers USING GIN (search_doc) WHERE citation_count >= 1 AND citation_count < 2;
