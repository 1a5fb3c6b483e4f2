-- derive_cited holds the researchers whose papers' citation counts moved
-- and whose papers did not: their h-index and most cited paper may be out
-- of date, nothing else of theirs. A day's increment cites tens of
-- thousands of older papers, and putting their authors on derive_queue
-- recomputed their fields and co-authors and reconsidered their families'
-- same-name links and initials, none of which a citation moves. Derive
-- empties it with derive_queue, at its end.
CREATE TABLE derive_cited (
	researcher_id BIGINT PRIMARY KEY);
