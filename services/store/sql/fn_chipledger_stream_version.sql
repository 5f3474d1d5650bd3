-- chipledger_stream_version: current version of a stream, 0 if it has no events.
CREATE OR REPLACE FUNCTION chipledger_stream_version(p_property text, p_stream text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT coalesce((SELECT s.version FROM streams s WHERE s.property = p_property AND s.stream = p_stream), 0));
END
$$;
