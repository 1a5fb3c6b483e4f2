-- TeX and LaTeX markup is folded before letters are: the Go
-- search_fold the triggers call folds it now (texFold in db/texfold.go),
-- so the papers whose title or abstract has a backslash, the only text
-- the rules change, are indexed again in both full-text tables.
DELETE FROM papers_fts WHERE rowid IN (SELECT id FROM papers WHERE instr(title, '\') > 0 OR instr(abstract, '\') > 0);
--bun:split
INSERT INTO papers_fts (rowid, title, abstract)
SELECT id, search_fold(title), search_fold(abstract) FROM papers WHERE instr(title, '\') > 0 OR instr(abstract, '\') > 0;
--bun:split
DELETE FROM papers_fts_cited WHERE rowid IN (SELECT id FROM papers
	WHERE citation_count >= 2 AND (instr(title, '\') > 0 OR instr(abstract, '\') > 0));
--bun:split
INSERT INTO papers_fts_cited (rowid, title, abstract, band)
SELECT id, search_fold(title), search_fold(abstract), CASE WHEN papers.citation_count >= 128 THEN 'c128' WHEN papers.citation_count >= 64 THEN 'c64' WHEN papers.citation_count >= 32 THEN 'c32' WHEN papers.citation_count >= 16 THEN 'c16' WHEN papers.citation_count >= 8 THEN 'c8' WHEN papers.citation_count >= 4 THEN 'c4' WHEN papers.citation_count >= 2 THEN 'c2' END
FROM papers WHERE citation_count >= 2 AND (instr(title, '\') > 0 OR instr(abstract, '\') > 0);
