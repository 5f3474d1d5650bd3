-- chipledger_refuse_archived_position: a balance as of a position inside an archive cannot be
-- answered from the live log (the balance functions call this first): CL008 with the last
-- archived position (migration 0008 made it).
CREATE OR REPLACE FUNCTION chipledger_refuse_archived_position(p_property text, p_position bigint)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_anchor bigint := (SELECT max(a.position) FROM archive_anchors a WHERE a.property = p_property);
BEGIN
    IF v_anchor IS NOT NULL AND p_position < v_anchor THEN
        RAISE EXCEPTION 'chipledger: position % is archived', p_position USING ERRCODE = 'CL008',
            DETAIL = json_build_object('position', p_position, 'archived_through', v_anchor)::text;
    END IF;
END
$$;
