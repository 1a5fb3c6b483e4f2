CREATE FUNCTION papers_title_doc(title text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_tsvector('simple', search_fold(title)) $$;

--bun:split
CREATE INDEX papers_title_search ON papers USING GIN (papers_title_doc(title));
