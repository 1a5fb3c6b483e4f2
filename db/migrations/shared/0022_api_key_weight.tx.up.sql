-- A key's weight is its client's part in the statement slots of the
-- server's pool while clients wait for them: a key of weight 2 gets twice
-- the slots of one of weight 1. Keys made before weights weigh 1, as
-- addresses do.
ALTER TABLE api_keys ADD COLUMN weight INTEGER NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 100);
