-- A search's candidates are its most cited matches (see
-- db.SearchCandidates), and a GIN index gives a word's matches in no
-- order: a word of 20,000 matches among 2.7 million papers read them all
-- and sorted them, and a more common word walked the papers in
-- citation order, testing each. Each band of citations (2 or 3, 4 to 7,
-- …, 128 or more; db.citedBands) has a GIN index of its own papers'
-- documents, so that a band's matches are one scan of a small index, and
-- the candidates are read from the top band down until they are found.
-- The papers cited less are read from papers_search_doc.
SET LOCAL maintenance_work_mem = '512MB';
--bun:split
CREATE INDEX papers_search_cited_128 ON papers USING GIN (search_doc) WHERE citation_count >= 128;
--bun:split
CREATE INDEX papers_search_cited_64 ON papers USING GIN (search_doc) WHERE citation_count >= 64 AND citation_count < 128;
--bun:split
CREATE INDEX papers_search_cited_32 ON papers USING GIN (search_doc) WHERE citation_count >= 32 AND citation_count < 64;
--bun:split
CREATE INDEX papers_search_cited_16 ON papers USING GIN (search_doc) WHERE citation_count >= 16 AND citation_count < 32;
--bun:split
CREATE INDEX papers_search_cited_8 ON papers USING GIN (search_doc) WHERE citation_count >= 8 AND citation_count < 16;
--bun:split
CREATE INDEX papers_search_cited_4 ON papers USING GIN (search_doc) WHERE citation_count >= 4 AND citation_count < 8;
--bun:split
CREATE INDEX papers_search_cited_2 ON papers USING GIN (search_doc) WHERE citation_count >= 2 AND citation_count < 4;
