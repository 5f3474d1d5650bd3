-- chipledger_last_closed_day: the latest gaming day a cage of the property closed (NULL: none),
-- kept with its head by chipledger_append; an import on it or before it is refused (R-CHIP-5).
CREATE OR REPLACE FUNCTION chipledger_last_closed_day(p_property text)
RETURNS date
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (SELECT h.last_closed_day FROM property_heads h WHERE h.property = p_property);
END
$$;
