-- The full-text index over papers' titles and abstracts on PostgreSQL: a
-- GIN index over papers_search_doc(title, abstract), the 'simple'
-- configuration (no stemming, no stop words, like SQLite's unicode61) over
-- text folded by search_fold, an IMMUTABLE translate() of accented Latin
-- letters (unaccent would fold more, but it is not installed everywhere
-- and its function is not IMMUTABLE). The first string of translate() ends
-- with the combining marks U+0300 to U+036F, which have no counterpart in
-- the second and are dropped; Go folds query words with the same table
-- (foldFrom, foldTo in db/searchindex.go, checked against this file).
-- translate() costs an import more than building the index, so plain ASCII
-- text (as many bytes as characters) skips it. Then the byte-order indexes
-- behind name prefix searches (see prefixMatch in db/lookup.go).

CREATE FUNCTION search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT CASE WHEN octet_length(t) = length(t) THEN lower(t)
			ELSE translate(lower(t), 'àáâãäåāăąçćĉċčďđèéêëēĕėęěĝğġģĥħìíîïĩīĭįıĵķĺļľŀłñńņňòóôõöøōŏőŕŗřśŝşšșţťŧțùúûüũūŭůűųŵýÿŷźżž̴̵̶̷̸̡̢̧̨̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼͇͈͉͍͎̀́̂̃̄̅̆̇̈̉̊̋̌̍̎̏̐̑̒̓̔̽̾̿̀́͂̓̈́͆͊͋͌̕̚ͅ͏͓͔͕͖͙͚͐͑͒͗͛ͣͤͥͦͧͨͩͪͫͬͭͮͯ͘͜͟͢͝͞͠͡', 'aaaaaaaaacccccddeeeeeeeeegggghhiiiiiiiiijklllllnnnnooooooooorrrsssssttttuuuuuuuuuuwyyyzzz') END $$;

--bun:split
CREATE FUNCTION papers_search_doc(title text, abstract text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT setweight(to_tsvector('simple', search_fold(title)), 'A') ||
			setweight(to_tsvector('simple', search_fold(coalesce(abstract, ''))), 'B') $$;

--bun:split
CREATE INDEX papers_search ON papers USING GIN (papers_search_doc(title, abstract));

--bun:split
CREATE INDEX researchers_name_key_c ON researchers (name_key COLLATE "C");

--bun:split
CREATE INDEX researchers_family_key_c ON researchers (family_key COLLATE "C");

--bun:split
CREATE INDEX institution_names_key_c ON institution_names (name_key COLLATE "C");
