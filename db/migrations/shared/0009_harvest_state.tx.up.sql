-- harvest_state records, per OAI-PMH set ('' for the whole of arXiv), the
-- datestamp (YYYY-MM-DD, the repository's granularity) through which
-- `papergraph harvest` has read every record: the next run asks for the
-- records changed from that day on. A run writes it only once it has read
-- the set to its end, so a killed run repeats rather than skips.
CREATE TABLE harvest_state (
	set_spec TEXT NOT NULL PRIMARY KEY,
	through  TEXT NOT NULL);
