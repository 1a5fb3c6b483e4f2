-- The papers cited once join papers_fts_cited, under the token c1: the
-- papers below the bands are then those never cited, whose order among
-- the candidates (newest first) is the full-text index's own, so that a
-- word's candidates past the bands are read newest first until they are
-- found, not every match of the word looked up and sorted (see
-- db.citedBands). The triggers of migration 0019 are made again with the
-- band.
DROP TRIGGER papers_fts_cited_insert;
--bun:split
DROP TRIGGER papers_fts_cited_delete;
--bun:split
DROP TRIGGER papers_fts_cited_update;
--bun:split
CREATE TRIGGER papers_fts_cited_insert AFTER INSERT ON papers WHEN new.citation_count >= 1 BEGIN
		INSERT INTO papers_fts_cited (rowid, title, abstract, band)
		VALUES (new.id, search_fold(new.title), search_fold(new.abstract), CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' WHEN new.citation_count >= 1 THEN 'c1' END);
	END;
--bun:split
CREATE TRIGGER papers_fts_cited_delete AFTER DELETE ON papers WHEN old.citation_count >= 1 BEGIN
		DELETE FROM papers_fts_cited WHERE rowid = old.id;
	END;
--bun:split
CREATE TRIGGER papers_fts_cited_update AFTER UPDATE OF title, abstract, citation_count ON papers
	WHEN (CASE WHEN old.citation_count >= 128 THEN 'c128' WHEN old.citation_count >= 64 THEN 'c64' WHEN old.citation_count >= 32 THEN 'c32' WHEN old.citation_count >= 16 THEN 'c16' WHEN old.citation_count >= 8 THEN 'c8' WHEN old.citation_count >= 4 THEN 'c4' WHEN old.citation_count >= 2 THEN 'c2' WHEN old.citation_count >= 1 THEN 'c1' END) IS NOT (CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' WHEN new.citation_count >= 1 THEN 'c1' END)
		OR (new.citation_count >= 1 AND (old.title IS NOT new.title OR old.abstract IS NOT new.abstract)) BEGIN
		DELETE FROM papers_fts_cited WHERE rowid = old.id AND old.citation_count >= 1;
		INSERT INTO papers_fts_cited (rowid, title, abstract, band)
		SELECT new.id, search_fold(new.title), search_fold(new.abstract), CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' WHEN new.citation_count >= 1 THEN 'c1' END WHERE new.citation_count >= 1;
	END;
--bun:split
INSERT INTO papers_fts_cited (rowid, title, abstract, band)
SELECT id, search_fold(title), search_fold(abstract), CASE WHEN papers.citation_count >= 128 THEN 'c128' WHEN papers.citation_count >= 64 THEN 'c64' WHEN papers.citation_count >= 32 THEN 'c32' WHEN papers.citation_count >= 16 THEN 'c16' WHEN papers.citation_count >= 8 THEN 'c8' WHEN papers.citation_count >= 4 THEN 'c4' WHEN papers.citation_count >= 2 THEN 'c2' WHEN papers.citation_count >= 1 THEN 'c1' END FROM papers WHERE citation_count >= 1 AND citation_count < 2;
--bun:split
INSERT INTO papers_fts_cited (papers_fts_cited) VALUES ('optimize');
