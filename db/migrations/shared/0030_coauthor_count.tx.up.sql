-- coauthor_count is the number of a researcher's rows in coauthors: the
-- size of the layer a collaboration-path search reads when it widens
-- through them, which the search weighs before choosing the side to
-- widen. Derive keeps it with the coauthors table.
ALTER TABLE researchers ADD COLUMN coauthor_count INTEGER NOT NULL DEFAULT 0;
UPDATE researchers SET coauthor_count = (SELECT COUNT(*) FROM coauthors c WHERE c.researcher_id = researchers.id)
WHERE id IN (SELECT researcher_id FROM coauthors);
