-- The full-text index splits words as SQLite's does: before
-- to_tsvector sees a text, search_words folds it (search_fold of 0003) and
-- turns every run of characters other than letters and digits into one
-- space, so that PostgreSQL's parser finds no file paths
-- ("string/fivebrane"), hyphenated compounds ("hep-th" beside "hep" and
-- "th"), host names or decimals to keep whole: a word is a run of letters
-- and digits on both databases, and Go splits query text the same way
-- (searchText in db/searchindex.go). [:alnum:] follows the database's
-- LC_CTYPE (C.UTF-8 or a language's UTF-8 locale class Unicode letters;
-- the plain C locale does not).
--
-- The document is stored in papers.search_doc, filled by triggers when a
-- title or abstract changes: ranking a match reads it instead of parsing
-- the abstract again (0003's expression index made ts_rank parse every
-- match's text, which for a common word is most of the archive). Titles
-- carry weight A and abstracts B; suggestions match the A words alone, so
-- one GIN index serves both and 0003's and 0004's indexes and functions go. A bulk load
-- left open keeps no definition of the indexes dropped here.

CREATE FUNCTION search_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT regexp_replace(search_fold(t), '[^[:alnum:]]+', ' ', 'g') $$;

--bun:split
CREATE FUNCTION papers_search_vector(title text, abstract text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT setweight(to_tsvector('simple', search_words(title)), 'A') ||
			setweight(to_tsvector('simple', search_words(coalesce(abstract, ''))), 'B') $$;

--bun:split
CREATE FUNCTION papers_search_doc_fill() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN NEW.search_doc := papers_search_vector(NEW.title, NEW.abstract); RETURN NEW; END $$;

--bun:split
ALTER TABLE papers ADD COLUMN search_doc tsvector;

--bun:split
UPDATE papers SET search_doc = papers_search_vector(title, abstract);

--bun:split
CREATE TRIGGER papers_search_doc_insert BEFORE INSERT ON papers
	FOR EACH ROW EXECUTE FUNCTION papers_search_doc_fill();

--bun:split
CREATE TRIGGER papers_search_doc_update BEFORE UPDATE OF title, abstract ON papers
	FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.abstract IS DISTINCT FROM NEW.abstract)
	EXECUTE FUNCTION papers_search_doc_fill();

--bun:split
DROP INDEX IF EXISTS papers_search;

--bun:split
DROP INDEX IF EXISTS papers_title_search;

--bun:split
DROP FUNCTION papers_search_doc(text, text);

--bun:split
DROP FUNCTION papers_title_doc(text);

--bun:split
DELETE FROM bulk_load WHERE name IN ('papers_search', 'papers_title_search');

--bun:split
CREATE INDEX papers_search_doc ON papers USING GIN (search_doc);
