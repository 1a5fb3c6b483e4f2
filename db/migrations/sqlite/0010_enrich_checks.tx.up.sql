-- enrich_checks records when papergraph enrich last asked a remote API
-- (source: openalex-works, s2-papers, openalex-authors, s2-authors) about
-- a paper or a researcher (item_id is the id of one or the other, as the
-- source says), found or not: a stopped run resumes with the items not yet
-- asked, and a later one asks again only about items older than its
-- refresh age.
CREATE TABLE enrich_checks (
	source     TEXT NOT NULL,
	item_id    BIGINT NOT NULL,
	checked_at TIMESTAMP NOT NULL,
	PRIMARY KEY (source, item_id)
);
