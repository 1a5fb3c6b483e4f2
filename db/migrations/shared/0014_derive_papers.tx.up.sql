-- derive_papers holds the papers whose citation counts may be out of date:
-- the writer adds those it inserts or updates (a new cited_by_count, say)
-- in the transaction that writes them, and derive adds the papers that
-- references it resolves now point to, recounts those papers' citations
-- and empties it in one transaction. Derive then reads the papers an
-- import changed, not every paper and reference of the archive. The papers
-- whose counts a stopped import left out of date start it.
CREATE TABLE derive_papers (
	paper_id BIGINT PRIMARY KEY);

INSERT INTO derive_papers (paper_id)
SELECT id FROM papers
WHERE citation_count <> CASE WHEN COALESCE(cited_by_count, 0) > archive_citation_count
	THEN cited_by_count ELSE archive_citation_count END;
