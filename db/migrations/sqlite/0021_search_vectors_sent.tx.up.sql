-- PostgreSQL's 0021 lets the importer send papers' search documents.
-- SQLite's full-text index is fed by the Go search_fold (db/searchindex.go)
-- already, so nothing changes here.
SELECT 1;
