-- A paper's analysis: a summary, what is new in it, the kind of paper,
-- its research field, a significance score from 0 to 10 and keywords
-- (a JSON array of strings), as a language model (or a person) read
-- them off the title and abstract. model and prompt_version name where
-- the analysis came from; abstract_hash is the hash of the abstract it
-- read, so that papergraph analyse analyses a paper again only when its
-- abstract changed. One row a paper at most; a paper without one has
-- no analysis.
CREATE TABLE paper_analyses (
	paper_id           BIGINT NOT NULL PRIMARY KEY REFERENCES papers (id) ON DELETE CASCADE,
	summary            TEXT NOT NULL,
	novelty            TEXT NOT NULL,
	paper_type         TEXT NOT NULL,
	research_field     TEXT NOT NULL,
	significance_score INTEGER NOT NULL CHECK (significance_score BETWEEN 0 AND 10),
	keywords           TEXT NOT NULL DEFAULT '[]',
	model              TEXT NOT NULL,
	prompt_version     TEXT NOT NULL,
	abstract_hash      TEXT NOT NULL,
	analysed_at        TIMESTAMP NOT NULL);
