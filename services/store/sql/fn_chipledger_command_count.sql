-- chipledger_command_count: how many command ids the property has taken: accepted (all but those bound to an archived
-- position, at or before the archive anchor: a row bound to no position of the log counts, so verify names it) and
-- refused.
CREATE OR REPLACE FUNCTION chipledger_command_count(p_property text)
RETURNS TABLE (accepted bigint, refused bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT count(*) FILTER (WHERE c.refusal_seq IS NULL
                              AND NOT coalesce(c.last_position BETWEEN 1 AND coalesce((SELECT max(a.position) FROM archive_anchors a
                                                                                        WHERE a.property = p_property), 0),
                                               false)),
           count(*) FILTER (WHERE c.refusal_seq IS NOT NULL)
      FROM commands c WHERE c.property = p_property;
END
$$;
