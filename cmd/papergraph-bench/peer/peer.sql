-- What a PostGraphile user adds to papergraph's PostgreSQL schema to serve
-- the README's first query (query.graphql) with the same rows: foreign keys
-- for the relations PostGraphile should follow, an index for the co-author
-- order, and computed-column functions (SQL, STABLE, not STRICT, so that
-- PostgreSQL can inline them) for the lists and derived values. The
-- paper's slug decodes TeX, which SQL cannot; papers.slug is filled by
-- papergraph-bench peer from papergraph's own slug function, as a
-- PostGraphile user's loader would fill it at write time.

ALTER TABLE papers ADD COLUMN slug text;

ALTER TABLE researchers ADD CONSTRAINT researchers_most_cited_paper_fkey
  FOREIGN KEY (most_cited_paper_id) REFERENCES papers (id);
ALTER TABLE coauthors ADD CONSTRAINT coauthors_researcher_fkey
  FOREIGN KEY (researcher_id) REFERENCES researchers (id);
ALTER TABLE coauthors ADD CONSTRAINT coauthors_coauthor_fkey
  FOREIGN KEY (coauthor_id) REFERENCES researchers (id);
ALTER TABLE same_name ADD CONSTRAINT same_name_researcher_fkey
  FOREIGN KEY (researcher_id) REFERENCES researchers (id);
ALTER TABLE same_name ADD CONSTRAINT same_name_other_fkey
  FOREIGN KEY (other_id) REFERENCES researchers (id);
ALTER TABLE researcher_categories ADD CONSTRAINT researcher_categories_researcher_fkey
  FOREIGN KEY (researcher_id) REFERENCES researchers (id);
ALTER TABLE researcher_categories ADD CONSTRAINT researcher_categories_category_fkey
  FOREIGN KEY (category) REFERENCES categories (code);

CREATE INDEX coauthors_rank ON coauthors (researcher_id, paper_count DESC, coauthor_id);

CREATE TYPE author_role AS ENUM ('FIRST', 'MIDDLE', 'LAST', 'SOLE');

-- Paper.absUrl, Paper.pdfUrl
CREATE FUNCTION papers_abs_url(p papers) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT 'https://arxiv.org/abs/' || NULLIF(p.arxiv_id, '') $$;
CREATE FUNCTION papers_pdf_url(p papers) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT 'https://arxiv.org/pdf/' || NULLIF(p.arxiv_id, '') $$;

-- Paper.categories: the paper's categories, the primary one first.
CREATE FUNCTION papers_categories(p papers) RETURNS SETOF categories LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT c.* FROM paper_categories AS pc JOIN categories AS c ON c.code = pc.category
   WHERE pc.paper_id = p.id ORDER BY pc.position $$;

-- Paper.citations: the papers citing p, newest first (no date last).
CREATE FUNCTION papers_citations(p papers) RETURNS SETOF papers LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT c.* FROM papers AS c
   WHERE c.id IN (SELECT r.citing_id FROM paper_references AS r WHERE r.cited_id = p.id)
   ORDER BY c.published DESC NULLS LAST, c.id DESC $$;

-- Paper.references: the papers of the archive p cites, newest first.
CREATE FUNCTION papers_references(p papers) RETURNS SETOF papers LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT c.* FROM papers AS c
   WHERE c.id IN (SELECT r.cited_id FROM paper_references AS r WHERE r.citing_id = p.id AND r.cited_id IS NOT NULL)
   ORDER BY c.published DESC NULLS LAST, c.id DESC $$;

-- Authorship.role: from the position and the paper's author count; null
-- when the author list is incomplete.
CREATE FUNCTION authorships_role(a authorships) RETURNS author_role LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN NOT p.authors_complete THEN NULL
               WHEN p.author_count = 1 THEN 'SOLE'
               WHEN a.position = 1 THEN 'FIRST'
               WHEN a.position = p.author_count THEN 'LAST'
               ELSE 'MIDDLE' END::author_role
   FROM papers AS p WHERE p.id = a.paper_id $$;

-- Researcher.slug: "<id>-<name slug>".
CREATE FUNCTION researchers_path_segment(r researchers) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT r.id::text || CASE WHEN r.slug = '' THEN '' ELSE '-' || r.slug END $$;

-- Researcher.authorPositions: one row per role, in that order.
CREATE FUNCTION researchers_author_positions(r researchers) RETURNS TABLE (role author_role, count integer)
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ VALUES ('FIRST'::author_role, r.first_count), ('MIDDLE', r.middle_count), ('LAST', r.last_count), ('SOLE', r.sole_count) $$;

-- Researcher.fields: categories of the researcher's papers, most first.
CREATE FUNCTION researchers_fields(r researchers) RETURNS SETOF researcher_categories LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT rc.* FROM researcher_categories AS rc WHERE rc.researcher_id = r.id
   ORDER BY rc.paper_count DESC, rc.category $$;

-- Researcher.sameName: the other profiles of the name, most papers first.
CREATE FUNCTION researchers_same_name(r researchers) RETURNS SETOF researchers LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT o.* FROM same_name AS s JOIN researchers AS o ON o.id = s.other_id
   WHERE s.researcher_id = r.id ORDER BY o.paper_count DESC, o.id $$;

-- Researcher.papers(sort: NEWEST)
CREATE FUNCTION researchers_papers(r researchers) RETURNS SETOF papers LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT p.* FROM papers AS p
   WHERE p.id IN (SELECT a.paper_id FROM authorships AS a WHERE a.researcher_id = r.id)
   ORDER BY p.published DESC NULLS LAST, p.id DESC $$;

-- Researcher.coauthors: most shared papers first.
CREATE FUNCTION researchers_coauthors(r researchers) RETURNS SETOF coauthors LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT c.* FROM coauthors AS c WHERE c.researcher_id = r.id
   ORDER BY c.paper_count DESC, c.coauthor_id $$;
