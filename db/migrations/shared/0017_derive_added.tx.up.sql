-- derive_added holds the papers an import added to an archive (not a bulk
-- load), in the transaction that writes them. Derive adds each to the
-- fields and co-authors of its authors who are not on derive_queue, and
-- to their figures too unless they are on derive_cited, and takes it off
-- in the same transaction: a day's increment is written by researchers with
-- hundreds of papers each, whose every paper and co-author a recompute
-- read again.
CREATE TABLE derive_added (
	paper_id BIGINT PRIMARY KEY);
