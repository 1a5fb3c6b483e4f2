-- The full-text index splits words as PostgreSQL's does: a word
-- is a run of letters and digits, folded by search_fold (db/searchindex.go),
-- which now also turns every other character of a non-ASCII text into a
-- space (ASCII text goes to unicode61 as it is: it already splits ASCII
-- there). The tokenizer no longer removes diacritics itself: search_fold's
-- table is the one both databases fold by, so a letter outside it (ǎ)
-- stays as it is on both. The table and its triggers are made again, the
-- same as 0003's but for the tokenizer, and refilled; a bulk load left
-- open keeps no definition of the triggers, which are live again.

DROP TRIGGER IF EXISTS papers_fts_insert;

--bun:split
DROP TRIGGER IF EXISTS papers_fts_delete;

--bun:split
DROP TRIGGER IF EXISTS papers_fts_update;

--bun:split
DELETE FROM bulk_load WHERE kind = 'trigger';

--bun:split
DROP TABLE papers_fts;

--bun:split
CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 0', prefix='2 3');

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
