-- TeX and LaTeX markup is folded before letters are: tex_fold
-- drops font and sizing commands and writes accented letters (Kucha\v{r},
-- G{\"o}del, {\o}) as their letters, by the rules of texRules in
-- db/texfold.go, which Go applies to query text and to the SQLite index
-- (TestTexRulesMatchMigration checks that the two hold the same rules).
-- regexp_replace matches leftmost-longest, as Go's rules are compiled to.
-- Every rule needs a backslash, so text without one skips them. The
-- papers whose title or abstract has a backslash are indexed again.

CREATE FUNCTION tex_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $f$ SELECT CASE WHEN strpos(t, '\') = 0 THEN t ELSE
			regexp_replace(regexp_replace(regexp_replace(regexp_replace(t,
				'\\(?:emph|em|textit|textbf|textrm|textsc|textsf|texttt|textsl|textup|textnormal|text|mathrm|mathbf|mathit|mathcal|mathbb|mathfrak|mathsf|mathtt|mathscr|rm|it|bf|sl|sc|sf|tt|cal|bm|boldsymbol|mbox|hbox|operatorname|left|right|big|Big|bigg|Bigg)([^a-zA-Z]|$)', ' \1', 'g'),
				'\{?\\(?:[''"^`~=.]|[vuHckdbrt](?:\s+|\{))\s*\{?\s*\\?([a-zA-Z])\s*\}?\}?', '\1', 'g'),
				'\{?\\(?:aa|AA)(?:\s+|\{\}|\}|$)', 'a', 'g'),
				'\{?\\(ss|ae|AE|oe|OE|o|O|l|L|i|j)(?:\s+|\{\}|\}|$)', '\1', 'g') END $f$;

--bun:split
CREATE OR REPLACE FUNCTION search_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT regexp_replace(search_fold(tex_fold(t)), '[^[:alnum:]]+', ' ', 'g') $$;

--bun:split
UPDATE papers SET search_doc = papers_search_vector(title, abstract),
		title_doc = ts_filter(papers_search_vector(title, abstract), '{a}')
	WHERE strpos(title, '\') > 0 OR strpos(abstract, '\') > 0;
