-- chipledger_max_refusal_seq: the highest stored refusal chain position of the property (0 if none).
CREATE OR REPLACE FUNCTION chipledger_max_refusal_seq(p_property text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT coalesce(max(r.refusal_seq), 0) FROM rejections r WHERE r.property = p_property);
END
$$;
