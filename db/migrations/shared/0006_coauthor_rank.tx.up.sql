-- coauthors_rank ordered each researcher's co-authors by shared papers.
-- The primary key already reads them together, and sorting even the
-- largest list costs a page nothing measurable, while the index doubled
-- the cost of writing the table during an import.
DROP INDEX coauthors_rank;
