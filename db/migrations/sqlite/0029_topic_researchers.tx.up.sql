-- topic_researchers holds, for each topic, the researchers with most
-- papers filed under it (as many as Topic.researchers can ask for), so
-- that the field reads rows rather than counting every paper of a topic
-- per request. rank orders a topic's researchers, 1 the first: most
-- papers first, the lower id among equals. Bylines of more than 100
-- authors are not counted, as a collaboration's thousands of names would
-- fill every list. A build of the topics and every filing of papers into
-- them (or recount after papers left) write the table again.
CREATE TABLE topic_researchers (
	topic_id      BIGINT NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
	rank          INTEGER NOT NULL,
	researcher_id BIGINT NOT NULL REFERENCES researchers (id) ON DELETE CASCADE,
	paper_count   INTEGER NOT NULL,
	PRIMARY KEY (topic_id, rank)) WITHOUT ROWID;
--bun:split
-- A researcher's rows go with the researcher (a merge of two, say).
CREATE INDEX topic_researchers_researcher ON topic_researchers (researcher_id);
--bun:split
-- The topics built before this table fill it as a build would.
INSERT INTO topic_researchers (topic_id, rank, researcher_id, paper_count)
SELECT x.topic_id, x.rank, x.researcher_id, x.n FROM (
	SELECT c.topic_id, c.researcher_id, c.n,
		ROW_NUMBER() OVER (PARTITION BY c.topic_id ORDER BY c.n DESC, c.researcher_id) AS rank
	FROM (
		SELECT pt.topic_id, a.researcher_id, COUNT(DISTINCT a.paper_id) AS n
		FROM paper_topics AS pt
		JOIN papers AS p ON p.id = pt.paper_id AND p.author_count <= 100
		JOIN authorships AS a ON a.paper_id = pt.paper_id
		WHERE a.researcher_id IS NOT NULL
		GROUP BY pt.topic_id, a.researcher_id) AS c) AS x
WHERE x.rank <= 100;
