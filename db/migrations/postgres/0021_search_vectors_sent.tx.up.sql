-- The importer builds the search documents of papers whose title and
-- abstract are all ASCII and sends them with the rows (db.InsertPapers,
-- see db/searchvector.go): building them here took most of the time of
-- inserting papers, on the database's one busy connection. The trigger
-- now builds a new row's documents only when they did not come with it;
-- an UPDATE of the title or abstract builds them as before.
CREATE OR REPLACE FUNCTION papers_search_doc_fill() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN
			IF TG_OP = 'UPDATE' OR NEW.search_doc IS NULL OR NEW.title_doc IS NULL THEN
				NEW.search_doc := papers_search_vector(NEW.title, NEW.abstract);
				NEW.title_doc := ts_filter(NEW.search_doc, '{a}');
			END IF;
			RETURN NEW;
		END $$;
