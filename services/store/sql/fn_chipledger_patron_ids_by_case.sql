-- chipledger_patron_ids_by_case: the patron streams of the property's log that differ only in case,
-- each group as one comma-separated text (what verify names: one patron under two spellings,
-- R-REBUY-1). Read from the log itself, not the streams projection (the insider pass renamed the
-- projection's row for a moment, and a patron came back in another case for less than he left with).
CREATE OR REPLACE FUNCTION chipledger_patron_ids_by_case(p_property text)
RETURNS TABLE (streams text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT string_agg(s.stream, ', ' ORDER BY s.stream)
      FROM (SELECT DISTINCT e.stream FROM events e WHERE e.property = p_property AND e.stream LIKE 'player-%') s
     GROUP BY lower(s.stream)
    HAVING count(*) > 1
     ORDER BY 1;
END
$$;
