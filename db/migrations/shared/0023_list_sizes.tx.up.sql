-- list_sizes holds, for each kind of list whose length depends on the data
-- (a paper's byline, a researcher's papers), how long such lists are in the
-- archive: the 99th percentile (p99) and the longest of the lists measured,
-- and how many were measured. The server estimates a query's size by p99
-- rather than by the list's most; derive rewrites the table after every
-- import and harvest, and an empty table leaves the estimates at the
-- schema's sizes.
CREATE TABLE list_sizes (
	name    TEXT NOT NULL PRIMARY KEY,
	p99     BIGINT NOT NULL,
	longest BIGINT NOT NULL,
	lists   BIGINT NOT NULL);
