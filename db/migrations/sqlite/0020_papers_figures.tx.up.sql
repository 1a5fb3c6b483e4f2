-- PostgreSQL's 0020 indexes the papers' columns the derive reads by
-- paper. SQLite finds a paper's row by its id, the table's own key, and
-- its rows seldom spill past their page: nothing to do here.
SELECT 1;
