-- bulk_load keeps the definitions of the indexes, triggers and foreign keys
-- a bulk load dropped, until it builds them again (see db/bulk.go).
CREATE TABLE bulk_load (
		name       TEXT PRIMARY KEY,
		kind       TEXT NOT NULL,
		definition TEXT NOT NULL);
