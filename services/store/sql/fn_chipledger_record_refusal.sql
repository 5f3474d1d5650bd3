-- chipledger_record_refusal: remember a refused command for good (R-AUDIT-3), chained.
--
-- The refusal takes the command id (a row in `commands` pointing at it, the same primary key an
-- append inserts, so an append and a refusal racing on one id cannot both win: the loser meets
-- unique_violation and the store asks again) and its place in the property's refusal chain,
-- under the head row lock appends take last. Answers what the id now is:
--   'recorded'  this call chained the refusal;
--   'replayed'  the id was refused before with this very request (its refusal answers);
--   'accepted'  the id was accepted before with this very request (its result answers);
-- and CL002 when the id was used for a different request, CL010 when the refusal's gaming day
-- (ending at p_day_ends_micros) has ended by the time it would be recorded at, CL011 when it is
-- an import's (its request names `imported_by`) on a gaming day a cage of the property closed.
-- Chain (format 2, chain.rs): p_entry is `{"body":<body>,"format":2,"kind":"refusal","position":`
-- and the entry ends here: seq || ',"prev":"' || hex(previous) || '","recorded_at_micros":' || micros || '}'.
CREATE OR REPLACE FUNCTION chipledger_record_refusal(
    p_property     text,
    p_command_id   text,
    p_request_hash bytea,
    p_entry        bytea,
    p_reason_code  text,
    p_rule_id      text,
    p_numbers      jsonb,
    p_detail       text,
    p_actor_id     text,
    p_actor_role   text,
    p_device       text,
    p_streams      text[],
    p_request      jsonb,
    p_player_id    text,
    p_gaming_day   date,
    p_reply        bytea,
    p_day_ends_micros bigint  -- the end of p_gaming_day for a refusal kept as it happens (NULL: an import's)
) RETURNS TABLE (outcome text, refusal_seq bigint, rejection_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    v_known    commands%ROWTYPE;
    v_seq      bigint;
    v_hash     bytea;
    v_recorded timestamptz;
    v_micros   bigint;
    v_id       bigint;
BEGIN
    -- The figures are what every reader decodes: a list of [name, whole number] pairs. Anything
    -- else is refused (CL005), so a holder of the application role cannot keep a refusal that
    -- makes every later listing of the property's refusals fail (rows are never deleted).
    IF jsonb_typeof(p_numbers) IS DISTINCT FROM 'array' OR EXISTS (
        SELECT 1 FROM jsonb_array_elements(p_numbers) AS n(pair)
         WHERE jsonb_typeof(n.pair) <> 'array' OR jsonb_array_length(n.pair) <> 2
            OR jsonb_typeof(n.pair -> 0) <> 'string' OR jsonb_typeof(n.pair -> 1) <> 'number'
            OR (n.pair ->> 1) !~ '^-?[0-9]{1,18}$') THEN
        RAISE EXCEPTION 'chipledger: not a refusal''s figures' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'a refusal''s numbers are a list of [name, whole number] pairs')::text;
    END IF;
    SELECT * INTO v_known FROM commands c WHERE c.property = p_property AND c.command_id = p_command_id;
    IF FOUND THEN
        IF v_known.request_hash <> p_request_hash THEN
            RAISE EXCEPTION 'chipledger: command id reused' USING ERRCODE = 'CL002',
                DETAIL = json_build_object('command_id', p_command_id)::text;
        END IF;
        IF v_known.refusal_seq IS NULL THEN
            RETURN QUERY SELECT 'accepted'::text, NULL::bigint, NULL::bigint;
        ELSE
            RETURN QUERY SELECT 'replayed'::text, r.refusal_seq, r.rejection_id FROM rejections r
                          WHERE r.property = p_property AND r.refusal_seq = v_known.refusal_seq;
        END IF;
        RETURN;
    END IF;

    PERFORM 1 FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO property_heads (property) VALUES (p_property) ON CONFLICT DO NOTHING;
    END IF;
    SELECT h.last_refusal_seq + 1, h.last_refusal_hash INTO v_seq, v_hash
      FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    -- Never before the property's last event or refusal: times never go back along either
    -- chain, whatever the clock does (the time pass: after a restart with the clocks an hour
    -- back, refusals were stamped before the ones already kept).
    v_recorded := greatest(clock_timestamp(),
                           (SELECT h.last_recorded_at FROM property_heads h WHERE h.property = p_property),
                           (SELECT r.recorded_at FROM rejections r WHERE r.property = p_property AND r.refusal_seq = v_seq - 1));
    v_micros := (extract(epoch FROM v_recorded) * 1000000)::bigint;
    -- R-CHIP-6: never kept on a gaming day its time is past (a refusal decided before the cutoff
    -- whose turn at the lock came after it); the store's caller takes its day again (CL010).
    IF p_day_ends_micros IS NOT NULL AND v_micros >= p_day_ends_micros THEN
        RAISE EXCEPTION 'chipledger: the refusal''s gaming day ended before it was kept' USING ERRCODE = 'CL010',
            DETAIL = json_build_object('recorded_micros', v_micros)::text;
    END IF;
    -- R-CHIP-5: an import's refusal is never kept on a day closed, or one before it, as its
    -- events are never written there (CL011 in chipledger_append); under the same head lock,
    -- so a close committed first is seen (the fixes' pass: imports refused by the rules while a
    -- cage closed the day were kept on it).
    IF p_request ? 'imported_by' AND p_gaming_day <= (SELECT h.last_closed_day FROM property_heads h WHERE h.property = p_property) THEN
        RAISE EXCEPTION 'chipledger: an import''s refusal on gaming day %, closed', p_gaming_day USING ERRCODE = 'CL011',
            DETAIL = json_build_object('gaming_day', p_gaming_day::text,
                                       'closed_through', (SELECT h.last_closed_day FROM property_heads h WHERE h.property = p_property)::text)::text;
    END IF;
    v_hash := sha256(p_entry || convert_to(format('%s,"prev":"%s","recorded_at_micros":%s}',
                                                  v_seq, encode(v_hash, 'hex'), v_micros), 'UTF8'));

    INSERT INTO rejections (property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role,
                            device, streams, request, recorded_at, refusal_seq, hash, request_hash, player_id,
                            gaming_day, reply)
    VALUES (p_property, p_command_id, p_reason_code, p_rule_id, p_numbers, p_detail, p_actor_id, p_actor_role,
            p_device, p_streams, p_request, v_recorded, v_seq, v_hash, p_request_hash, p_player_id,
            p_gaming_day, p_reply)
    RETURNING rejections.rejection_id INTO v_id;
    -- A concurrent append or refusal of the same id meets this primary key (unique_violation).
    INSERT INTO commands (property, command_id, request_hash, recorded_at, refusal_seq)
    VALUES (p_property, p_command_id, p_request_hash, v_recorded, v_seq);
    UPDATE property_heads SET last_refusal_seq = v_seq, last_refusal_hash = v_hash WHERE property = p_property;
    RETURN QUERY SELECT 'recorded'::text, v_seq, v_id;
END
$$;
