-- topics are groups of the archive's papers found from their embeddings
-- (see package topics): level 0 the broad topics, level 1 the topics
-- within one, whose parent_id is its topic. centroid is the mean of the
-- members' vectors under model (little-endian float32s), by which a paper
-- new since the topics were built joins the nearest; paper_count is kept
-- as papers join and leave. A rebuild replaces every row.
CREATE TABLE topics (
	id          BIGINT NOT NULL PRIMARY KEY,
	parent_id   BIGINT REFERENCES topics (id) ON DELETE CASCADE,
	level       INTEGER NOT NULL,
	name        TEXT NOT NULL,
	paper_count INTEGER NOT NULL DEFAULT 0,
	model       TEXT NOT NULL,
	centroid    BLOB NOT NULL);
--bun:split
CREATE INDEX topics_parent ON topics (parent_id, id);
--bun:split
-- paper_topics files a paper under its topic of each level. text_hash is
-- that of the vector the paper was filed by (paper_embeddings.text_hash):
-- a paper whose vector changed since is filed again.
CREATE TABLE paper_topics (
	paper_id  BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	topic_id  BIGINT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
	level     INTEGER NOT NULL,
	text_hash BIGINT NOT NULL,
	PRIMARY KEY (paper_id, level));
--bun:split
CREATE INDEX paper_topics_topic ON paper_topics (topic_id, paper_id);
--bun:split
-- topic_builds records the last build of the topics: the model and the
-- number of papers it clustered, so that an archive grown well beyond it
-- is clustered again rather than only filed into the old topics.
CREATE TABLE topic_builds (
	model    TEXT NOT NULL PRIMARY KEY,
	papers   BIGINT NOT NULL,
	built_at TIMESTAMP NOT NULL);
