-- PostgreSQL's 0020 indexes the papers' columns the derive reads by
-- paper. SQLite finds a paper's row by its id, the table's own key; an
-- index like PostgreSQL's was not measured here, so none is added.
SELECT 1;
