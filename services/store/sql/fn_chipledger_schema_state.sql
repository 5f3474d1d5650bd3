-- chipledger_schema_state: what the admin step last installed (SHA-256 of the function files), NULL before.
CREATE OR REPLACE FUNCTION chipledger_schema_state()
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT s.functions_sha256 FROM schema_state s);
END
$$;
