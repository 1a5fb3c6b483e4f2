-- The papergraph schema. Written once for both databases: {{pk}}, {{ts}}
-- and {{without_rowid}} are replaced per dialect (see migrate.go);
-- everything else is plain SQL that SQLite and PostgreSQL read alike.
-- Link tables are WITHOUT ROWID on SQLite: their primary key is then the
-- table itself rather than a second b-tree beside it.

CREATE TABLE categories (
	code        TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	archive     TEXT NOT NULL,
	group_name  TEXT NOT NULL,
	active      BOOLEAN NOT NULL,
	-- in_taxonomy is false for codes met in data that arXiv's taxonomy lacks.
	in_taxonomy BOOLEAN NOT NULL
);

CREATE TABLE papers (
	id               {{pk}},
	arxiv_id         TEXT UNIQUE,
	version          INTEGER NOT NULL DEFAULT 0,
	doi              TEXT,
	title            TEXT NOT NULL DEFAULT '',
	abstract         TEXT,
	comments         TEXT,
	journal_ref      TEXT,
	report_no        TEXT,
	license          TEXT,
	published        {{ts}},
	updated          {{ts}},
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
CREATE INDEX papers_doi ON papers (doi);
CREATE INDEX papers_published ON papers (published, id);
CREATE INDEX papers_citation_count ON papers (citation_count, id);

CREATE TABLE paper_categories (
	paper_id BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	category TEXT NOT NULL REFERENCES categories (code),
	PRIMARY KEY (paper_id, position)
) {{without_rowid}};
CREATE INDEX paper_categories_category ON paper_categories (category, paper_id);

CREATE TABLE researchers (
	id             {{pk}},
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
CREATE INDEX researchers_name_key ON researchers (name_key);
CREATE INDEX researchers_family_key ON researchers (family_key);

CREATE TABLE institutions (
	id          {{pk}},
	ror_id      TEXT UNIQUE,
	openalex_id TEXT UNIQUE,
	name        TEXT NOT NULL,
	country     TEXT,
	types       TEXT,
	status      TEXT,
	established INTEGER
);

CREATE TABLE institution_names (
	institution_id BIGINT NOT NULL REFERENCES institutions (id) ON DELETE CASCADE,
	name           TEXT NOT NULL,
	kind           TEXT NOT NULL,
	name_key       TEXT NOT NULL,
	PRIMARY KEY (institution_id, name)
) {{without_rowid}};
CREATE INDEX institution_names_key ON institution_names (name_key);

CREATE TABLE authorships (
	paper_id      BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position      INTEGER NOT NULL,
	name          TEXT NOT NULL,
	researcher_id BIGINT REFERENCES researchers (id),
	PRIMARY KEY (paper_id, position)
) {{without_rowid}};
CREATE INDEX authorships_researcher ON authorships (researcher_id, paper_id);

CREATE TABLE affiliations (
	paper_id       BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	position       INTEGER NOT NULL,
	seq            INTEGER NOT NULL,
	raw            TEXT NOT NULL,
	ror_id         TEXT,
	institution_id BIGINT REFERENCES institutions (id),
	PRIMARY KEY (paper_id, position, seq)
) {{without_rowid}};
CREATE INDEX affiliations_institution ON affiliations (institution_id, paper_id);

-- paper_references holds every reference a source gave; cited_id is set
-- once the target is in the archive, which makes the row a citation edge.
CREATE TABLE paper_references (
	citing_id BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	target    TEXT NOT NULL,
	cited_id  BIGINT REFERENCES papers (id),
	PRIMARY KEY (citing_id, target)
) {{without_rowid}};
CREATE INDEX paper_references_cited ON paper_references (cited_id, citing_id);
CREATE INDEX paper_references_target ON paper_references (target);

-- The tables below are derived from the ones above after each import (see
-- ingest/derive.go), which keeps them consistent; they carry no foreign
-- keys so that rebuilding them costs no per-row checks.

CREATE TABLE researcher_categories (
	researcher_id BIGINT NOT NULL,
	category      TEXT NOT NULL,
	paper_count   INTEGER NOT NULL,
	PRIMARY KEY (researcher_id, category)
) {{without_rowid}};

CREATE TABLE coauthors (
	researcher_id BIGINT NOT NULL,
	coauthor_id   BIGINT NOT NULL,
	paper_count   INTEGER NOT NULL,
	PRIMARY KEY (researcher_id, coauthor_id)
) {{without_rowid}};
CREATE INDEX coauthors_rank ON coauthors (researcher_id, paper_count, coauthor_id);

CREATE TABLE same_name (
	researcher_id BIGINT NOT NULL,
	other_id      BIGINT NOT NULL,
	PRIMARY KEY (researcher_id, other_id)
) {{without_rowid}};

-- derive_queue holds the researchers whose derived figures are out of
-- date: the writer adds them in the transaction that changes their papers,
-- and derive empties it once they are recomputed, so a crash in between
-- loses nothing.
CREATE TABLE derive_queue (
	researcher_id BIGINT PRIMARY KEY
) {{without_rowid}};
