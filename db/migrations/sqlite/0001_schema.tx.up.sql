-- The papergraph schema on SQLite. Link tables are WITHOUT ROWID: their
-- primary key is then the table itself rather than a second b-tree beside
-- it. postgres/0001_schema.tx.up.sql is the same schema with PostgreSQL's
-- types; bun runs each part between --bun:split lines as one statement.

CREATE TABLE categories (
	code        TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	archive     TEXT NOT NULL,
	group_name  TEXT NOT NULL,
	active      BOOLEAN NOT NULL,
	-- in_taxonomy is false for codes met in data that arXiv's taxonomy lacks.
	in_taxonomy BOOLEAN NOT NULL
);
--bun:split

CREATE TABLE papers (
	id               INTEGER PRIMARY KEY,
	arxiv_id         TEXT UNIQUE,
	version          INTEGER NOT NULL DEFAULT 0,
	doi              TEXT,
	title            TEXT NOT NULL DEFAULT '',
	abstract         TEXT,
	comments         TEXT,
	journal_ref      TEXT,
	report_no        TEXT,
	license          TEXT,
	published        TIMESTAMP,
	updated          TIMESTAMP,
	primary_category TEXT REFERENCES categories (code),
	byline           TEXT,
	cited_by_count   INTEGER,
	openalex_id      TEXT UNIQUE,
	s2_id            TEXT UNIQUE,
	author_count     INTEGER NOT NULL DEFAULT 0,
	authors_complete BOOLEAN NOT NULL DEFAULT FALSE,
	-- authors_score ranks how much the stored author list tells (see
	-- ingest); a source replaces the list only with a better one.
	authors_score    INTEGER NOT NULL DEFAULT 0,
	-- Derived after each import.
	archive_citation_count INTEGER NOT NULL DEFAULT 0,
	citation_count         INTEGER NOT NULL DEFAULT 0
);
--bun:split
CREATE INDEX papers_doi ON papers (doi);
--bun:split
CREATE INDEX papers_published ON papers (published, id);
--bun:split
CREATE INDEX papers_citation_count ON papers (citation_count, id);
--bun:split

CREATE TABLE paper_categories (
	paper_id BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	category TEXT NOT NULL REFERENCES categories (code),
	PRIMARY KEY (paper_id, position)
) WITHOUT ROWID;
--bun:split
CREATE INDEX paper_categories_category ON paper_categories (category, paper_id);
--bun:split

CREATE TABLE researchers (
	id             INTEGER PRIMARY KEY,
	name           TEXT NOT NULL,
	name_key       TEXT NOT NULL,
	family_key     TEXT NOT NULL,
	slug           TEXT NOT NULL,
	orcid          TEXT UNIQUE,
	openalex_id    TEXT UNIQUE,
	s2_id          TEXT UNIQUE,
	h_index        INTEGER,
	citation_count INTEGER,
	works_count    INTEGER,
	-- Derived after each import.
	paper_count          INTEGER NOT NULL DEFAULT 0,
	position_known_count INTEGER NOT NULL DEFAULT 0,
	first_count          INTEGER NOT NULL DEFAULT 0,
	middle_count         INTEGER NOT NULL DEFAULT 0,
	last_count           INTEGER NOT NULL DEFAULT 0,
	sole_count           INTEGER NOT NULL DEFAULT 0,
	archive_h_index      INTEGER NOT NULL DEFAULT 0,
	most_cited_paper_id  BIGINT
);
--bun:split
CREATE INDEX researchers_name_key ON researchers (name_key);
--bun:split
CREATE INDEX researchers_family_key ON researchers (family_key);
--bun:split

CREATE TABLE institutions (
	id          INTEGER PRIMARY KEY,
	ror_id      TEXT UNIQUE,
	openalex_id TEXT UNIQUE,
	name        TEXT NOT NULL,
	country     TEXT,
	types       TEXT,
	status      TEXT,
	established INTEGER
);
--bun:split

CREATE TABLE institution_names (
	institution_id BIGINT NOT NULL REFERENCES institutions (id) ON DELETE CASCADE,
	name           TEXT NOT NULL,
	kind           TEXT NOT NULL,
	name_key       TEXT NOT NULL,
	PRIMARY KEY (institution_id, name)
) WITHOUT ROWID;
--bun:split
CREATE INDEX institution_names_key ON institution_names (name_key);
--bun:split

CREATE TABLE authorships (
	paper_id      BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position      INTEGER NOT NULL,
	name          TEXT NOT NULL,
	researcher_id BIGINT REFERENCES researchers (id),
	PRIMARY KEY (paper_id, position)
) WITHOUT ROWID;
--bun:split
CREATE INDEX authorships_researcher ON authorships (researcher_id, paper_id);
--bun:split

CREATE TABLE affiliations (
	paper_id       BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position       INTEGER NOT NULL,
	seq            INTEGER NOT NULL,
	raw            TEXT NOT NULL,
	ror_id         TEXT,
	institution_id BIGINT REFERENCES institutions (id),
	PRIMARY KEY (paper_id, position, seq)
) WITHOUT ROWID;
--bun:split
CREATE INDEX affiliations_institution ON affiliations (institution_id, paper_id);
--bun:split

-- paper_references holds every reference a source gave; cited_id is set
-- once the target is in the archive, which makes the row a citation edge.
CREATE TABLE paper_references (
	citing_id BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	target    TEXT NOT NULL,
	cited_id  BIGINT REFERENCES papers (id),
	PRIMARY KEY (citing_id, target)
) WITHOUT ROWID;
--bun:split
CREATE INDEX paper_references_cited ON paper_references (cited_id, citing_id);
--bun:split
CREATE INDEX paper_references_target ON paper_references (target);
--bun:split

-- The tables below are derived from the ones above after each import (see
-- ingest/derive.go), which keeps them consistent; they carry no foreign
-- keys so that rebuilding them costs no per-row checks.

CREATE TABLE researcher_categories (
	researcher_id BIGINT NOT NULL,
	category      TEXT NOT NULL,
	paper_count   INTEGER NOT NULL,
	PRIMARY KEY (researcher_id, category)
) WITHOUT ROWID;
--bun:split

CREATE TABLE coauthors (
	researcher_id BIGINT NOT NULL,
	coauthor_id   BIGINT NOT NULL,
	paper_count   INTEGER NOT NULL,
	PRIMARY KEY (researcher_id, coauthor_id)
) WITHOUT ROWID;
--bun:split
CREATE INDEX coauthors_rank ON coauthors (researcher_id, paper_count, coauthor_id);
--bun:split

CREATE TABLE same_name (
	researcher_id BIGINT NOT NULL,
	other_id      BIGINT NOT NULL,
	PRIMARY KEY (researcher_id, other_id)
) WITHOUT ROWID;
--bun:split

-- derive_queue holds the researchers whose derived figures are out of
-- date: the writer adds them in the transaction that changes their papers,
-- and derive empties it once they are recomputed, so a crash in between
-- loses nothing.
CREATE TABLE derive_queue (
	researcher_id BIGINT PRIMARY KEY
) WITHOUT ROWID;
