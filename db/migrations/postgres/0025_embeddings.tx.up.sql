-- embedding_models holds the embedders whose vectors the archive keeps, by
-- name: the built-in model learned from the archive stores its vocabulary
-- and word vectors in data (see package embed); a provider's row has none.
-- active marks the model queries are embedded with; at most one is.
CREATE TABLE embedding_models (
	name       TEXT NOT NULL PRIMARY KEY,
	dim        INTEGER NOT NULL CHECK (dim > 0),
	data       BYTEA,
	active     BOOLEAN NOT NULL DEFAULT FALSE,
	created_at TIMESTAMP NOT NULL);
--bun:split
-- paper_embeddings holds a paper's vector under a model, dim little-endian
-- float32s. text_hash is a hash of the text that was embedded (title and
-- abstract): a paper whose hash differs, or that has no row, is embedded
-- again, and no other.
CREATE TABLE paper_embeddings (
	paper_id  BIGINT NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
	model     TEXT NOT NULL REFERENCES embedding_models (name) ON DELETE CASCADE,
	text_hash BIGINT NOT NULL,
	vector    BYTEA NOT NULL,
	PRIMARY KEY (model, paper_id));
