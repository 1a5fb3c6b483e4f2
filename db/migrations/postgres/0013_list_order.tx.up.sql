-- Pages that do not grow with the archive.
--
-- A category's papers, newest or oldest first, were read by joining every
-- paper filed under the category to papers and sorting them all to keep a
-- page, so a page of a large category cost as much as the category, and
-- the cost grew with the archive. paper_categories now carries its paper's first-version date
-- (the writer keeps it equal to papers.published), and its category index
-- is in that order, so a page is a range of the index: as many rows read
-- as the page shows.
ALTER TABLE paper_categories ADD COLUMN published TIMESTAMPTZ;
--bun:split
UPDATE paper_categories SET published = (SELECT p.published FROM papers AS p WHERE p.id = paper_categories.paper_id);
--bun:split
DROP INDEX paper_categories_category;
--bun:split
CREATE INDEX paper_categories_category ON paper_categories (category, published, paper_id);

-- A category's researchers with most papers there, likewise: every
-- researcher_categories row of the category was read, joined to
-- researchers and sorted.
--bun:split
CREATE INDEX researcher_categories_rank ON researcher_categories (category, paper_count DESC, researcher_id);

-- derive_batch holds the part of derive_queue whose figures, fields and
-- co-authors one transaction of derive recomputes: the whole queue at
-- once held every co-author pair of the archive in memory.
--bun:split
CREATE TABLE derive_batch (
	researcher_id BIGINT PRIMARY KEY
);
