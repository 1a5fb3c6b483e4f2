-- A search's candidates are its most cited matches (see
-- db.SearchCandidates), and a full-text index gives a word's matches in id
-- order, not in citation order: a word of 20,000 matches among 2.7 million
-- papers read them all and sorted them, and a more common word
-- walked the papers in citation order, probing the index for each.
-- papers_fts_cited holds the papers cited twice or more, each with the
-- token of its band of citations (c2: 2 or 3, c4: 4 to 7, …, c128: 128 or
-- more; db.citedBands) in its band column, so that a band's matches are
-- one query of this index, and the candidates are read from the top band
-- down until they are found. The triggers keep it as papers change; a
-- paper moves band when its count does, which derive sets once per
-- import.
CREATE VIRTUAL TABLE papers_fts_cited USING fts5(title, abstract, band, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 0', prefix='2 3');
--bun:split
CREATE TRIGGER papers_fts_cited_insert AFTER INSERT ON papers WHEN new.citation_count >= 2 BEGIN
		INSERT INTO papers_fts_cited (rowid, title, abstract, band)
		VALUES (new.id, search_fold(new.title), search_fold(new.abstract), CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' END);
	END;
--bun:split
CREATE TRIGGER papers_fts_cited_delete AFTER DELETE ON papers WHEN old.citation_count >= 2 BEGIN
		DELETE FROM papers_fts_cited WHERE rowid = old.id;
	END;
--bun:split
CREATE TRIGGER papers_fts_cited_update AFTER UPDATE OF title, abstract, citation_count ON papers
	WHEN (CASE WHEN old.citation_count >= 128 THEN 'c128' WHEN old.citation_count >= 64 THEN 'c64' WHEN old.citation_count >= 32 THEN 'c32' WHEN old.citation_count >= 16 THEN 'c16' WHEN old.citation_count >= 8 THEN 'c8' WHEN old.citation_count >= 4 THEN 'c4' WHEN old.citation_count >= 2 THEN 'c2' END) IS NOT (CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' END)
		OR (new.citation_count >= 2 AND (old.title IS NOT new.title OR old.abstract IS NOT new.abstract)) BEGIN
		DELETE FROM papers_fts_cited WHERE rowid = old.id AND old.citation_count >= 2;
		INSERT INTO papers_fts_cited (rowid, title, abstract, band)
		SELECT new.id, search_fold(new.title), search_fold(new.abstract), CASE WHEN new.citation_count >= 128 THEN 'c128' WHEN new.citation_count >= 64 THEN 'c64' WHEN new.citation_count >= 32 THEN 'c32' WHEN new.citation_count >= 16 THEN 'c16' WHEN new.citation_count >= 8 THEN 'c8' WHEN new.citation_count >= 4 THEN 'c4' WHEN new.citation_count >= 2 THEN 'c2' END WHERE new.citation_count >= 2;
	END;
--bun:split
INSERT INTO papers_fts_cited (rowid, title, abstract, band)
SELECT id, search_fold(title), search_fold(abstract), CASE WHEN papers.citation_count >= 128 THEN 'c128' WHEN papers.citation_count >= 64 THEN 'c64' WHEN papers.citation_count >= 32 THEN 'c32' WHEN papers.citation_count >= 16 THEN 'c16' WHEN papers.citation_count >= 8 THEN 'c8' WHEN papers.citation_count >= 4 THEN 'c4' WHEN papers.citation_count >= 2 THEN 'c2' END FROM papers WHERE citation_count >= 2;
--bun:split
INSERT INTO papers_fts_cited (papers_fts_cited) VALUES ('optimize');
