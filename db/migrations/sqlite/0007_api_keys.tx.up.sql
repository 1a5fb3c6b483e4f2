-- API keys sign users in (papergraph apikey create). Only a key's SHA-256
-- hash is kept, as hex, with its first characters (prefix) to tell keys
-- apart in listings. A signed-in user follows researchers and categories;
-- a key follows each at most once, so following again changes nothing.
CREATE TABLE api_keys (
	id           INTEGER PRIMARY KEY,
	name         TEXT NOT NULL,
	prefix       TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TIMESTAMP NOT NULL,
	revoked_at   TIMESTAMP,
	last_used_at TIMESTAMP
);
--bun:split
CREATE TABLE followed_researchers (
	api_key_id    BIGINT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
	researcher_id BIGINT NOT NULL REFERENCES researchers (id) ON DELETE CASCADE,
	created_at    TIMESTAMP NOT NULL,
	PRIMARY KEY (api_key_id, researcher_id)
) WITHOUT ROWID;
--bun:split
CREATE INDEX followed_researchers_researcher ON followed_researchers (researcher_id);
--bun:split
CREATE TABLE followed_categories (
	api_key_id BIGINT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
	category   TEXT NOT NULL REFERENCES categories (code),
	created_at TIMESTAMP NOT NULL,
	PRIMARY KEY (api_key_id, category)
) WITHOUT ROWID;
