-- text_rev counts the changes of a paper's title and abstract: the
-- trigger adds one whenever either changes. paper_embeddings.text_rev is
-- the count the vector was made at, so that papergraph embed finds the
-- papers to embed again by comparing two integers in two narrow indexes,
-- without reading any text. Rows stored before this migration have -1,
-- matching no paper: the first run after it compares their texts' hashes
-- once and records the count.
ALTER TABLE papers ADD COLUMN text_rev INTEGER NOT NULL DEFAULT 0;
--bun:split
CREATE TRIGGER papers_text_rev_bump AFTER UPDATE OF title, abstract ON papers
	WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract BEGIN
		UPDATE papers SET text_rev = text_rev + 1 WHERE id = new.id;
	END;
--bun:split
CREATE INDEX papers_text_rev ON papers (id, text_rev);
--bun:split
ALTER TABLE paper_embeddings ADD COLUMN text_rev INTEGER NOT NULL DEFAULT -1;
--bun:split
-- generation numbers the writes of a model's vectors: each transaction
-- that writes some takes the model's next generation and stamps its rows
-- with it, so that a server keeping the vectors in memory reads, when the
-- model's generation moved, only the rows written since it last looked,
-- whichever process wrote them.
ALTER TABLE paper_embeddings ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE embedding_models ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
--bun:split
-- Unique, as the key it extends is: SQLite's planner then reads a vector's
-- text_rev from this index, not from the table's rows beside the vector.
CREATE UNIQUE INDEX paper_embeddings_text_rev ON paper_embeddings (model, paper_id, text_rev);
--bun:split
CREATE INDEX paper_embeddings_generation ON paper_embeddings (model, generation);
