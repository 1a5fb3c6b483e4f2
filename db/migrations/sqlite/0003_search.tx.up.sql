-- The full-text index over papers' titles and abstracts on SQLite:
-- papers_fts is a contentless FTS5 table (it stores the index, not the
-- text) that the triggers on papers keep in step. They index the text as
-- search_fold leaves it, a Go function registered with the driver (see
-- db/searchindex.go), which folds the letters unicode61 cannot (ł, ø) as
-- PostgreSQL's search_fold does; the tokenizer then folds case and other
-- diacritics. prefix='2 3' keeps prefix indexes that make short prefix
-- queries (typeahead) cheap; contentless_delete lets the triggers remove a
-- paper by rowid alone. Imports upsert every column: only a changed text
-- touches the index.

CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2', prefix='2 3');

--bun:split
CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
		INSERT INTO papers_fts (rowid, title, abstract) VALUES (new.id, search_fold(new.title), search_fold(new.abstract));
	END;

--bun:split
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
		DELETE FROM papers_fts WHERE rowid = old.id;
	END;

--bun:split
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract ON papers
	WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract BEGIN
		DELETE FROM papers_fts WHERE rowid = old.id;
		INSERT INTO papers_fts (rowid, title, abstract) VALUES (new.id, search_fold(new.title), search_fold(new.abstract));
	END;

--bun:split
INSERT INTO papers_fts (rowid, title, abstract) SELECT id, search_fold(title), search_fold(abstract) FROM papers;
