-- Where the external figures come from: cited_by_source names the source
-- of papers.cited_by_count, figures_source that of researchers' h_index,
-- citation_count and works_count ('openalex' or 's2'), each with the
-- time papergraph wrote the figures from it (an import of the source's
-- snapshot or a papergraph enrich run). NULL with the figures unknown,
-- or written before this migration.
ALTER TABLE papers ADD COLUMN cited_by_source TEXT;
ALTER TABLE papers ADD COLUMN cited_by_at TIMESTAMP;
ALTER TABLE researchers ADD COLUMN figures_source TEXT;
ALTER TABLE researchers ADD COLUMN figures_at TIMESTAMP;
