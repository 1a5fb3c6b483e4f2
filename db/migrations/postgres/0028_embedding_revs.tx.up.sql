-- text_rev counts the changes of a paper's title and abstract: the
-- trigger adds one whenever either changes. paper_embeddings.text_rev is
-- the count the vector was made at, so that papergraph embed finds the
-- papers to embed again by comparing two integers in two narrow indexes,
-- without reading any text. Rows stored before this migration have -1,
-- matching no paper: the first run after it compares their texts' hashes
-- once and records the count.
ALTER TABLE papers ADD COLUMN text_rev BIGINT NOT NULL DEFAULT 0;
--bun:split
CREATE FUNCTION papers_text_rev_bump() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN NEW.text_rev := OLD.text_rev + 1; RETURN NEW; END $$;
--bun:split
CREATE TRIGGER papers_text_rev_bump BEFORE UPDATE OF title, abstract ON papers
	FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.abstract IS DISTINCT FROM NEW.abstract)
	EXECUTE FUNCTION papers_text_rev_bump();
--bun:split
CREATE INDEX papers_text_rev ON papers (id, text_rev);
--bun:split
ALTER TABLE paper_embeddings ADD COLUMN text_rev BIGINT NOT NULL DEFAULT -1;
--bun:split
-- generation numbers the writes of a model's vectors: each transaction
-- that writes some takes the model's next generation and stamps its rows
-- with it, so that a server keeping the vectors in memory reads, when the
-- model's generation moved, only the rows written since it last looked,
-- whichever process wrote them. Taking it locks the model's row, so the
-- generations commit in order.
ALTER TABLE paper_embeddings ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
--bun:split
ALTER TABLE embedding_models ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
--bun:split
CREATE UNIQUE INDEX paper_embeddings_text_rev ON paper_embeddings (model, paper_id, text_rev);
--bun:split
CREATE INDEX paper_embeddings_generation ON paper_embeddings (model, generation);
