-- chipledger_apply_projection_ops: the domain projections of an append (projection.rs,
-- ProjectionOp), applied in order inside chipledger_append, member by member, when its group has
-- ops other than table play's or its set-based statements failed (fn_chipledger_append.sql, step
-- 5); not executable by the application role. First made by migration 0002 (changed in 0003
-- and 0005): this file is what runs.
CREATE OR REPLACE FUNCTION chipledger_apply_projection_ops(p_property text, p_ops jsonb[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    op jsonb;
    v_limit bigint;
    v_outstanding bigint;
BEGIN
    FOREACH op IN ARRAY p_ops LOOP
        CASE op->>'op'
        WHEN 'seated' THEN
            INSERT INTO player_sessions (property, player_id, table_id, seat, game_key, seated_at_ms, seated_event_id)
            VALUES (p_property, op->>'player_id', op->>'table_id', (op->>'seat')::int,
                    op->>'game_key', (op->>'at_ms')::bigint, (op->>'event_id')::uuid)
            ON CONFLICT (property, player_id) DO UPDATE
               SET table_id = EXCLUDED.table_id, seat = EXCLUDED.seat, game_key = EXCLUDED.game_key,
                   seated_at_ms = EXCLUDED.seated_at_ms, seated_event_id = EXCLUDED.seated_event_id;
        WHEN 'departed' THEN
            UPDATE player_sessions
               SET table_id = NULL, seat = NULL, game_key = NULL, seated_at_ms = NULL, seated_event_id = NULL
             WHERE property = p_property AND player_id = op->>'player_id';
            PERFORM chipledger_project_departure(p_property, op->>'player_id', op->>'game_key',
                op->>'table_id', (op->>'amount_left_cents')::bigint, (op->>'at_ms')::bigint);
        WHEN 'departure_reversed' THEN
            PERFORM chipledger_project_departure_reversed(p_property, op->>'player_id',
                op->>'table_id', (op->>'at_ms')::bigint);
        WHEN 'cash' THEN
            -- No upsert: a correction carries a negative amount, and an upsert's proposed row
            -- is checked against cash_in_cents >= 0 before the conflict is seen. The rules only
            -- take back what the day's total holds, so the updated row stays non-negative.
            UPDATE patron_daily_cash
               SET cash_in_cents = cash_in_cents + (op->>'cash_in_cents')::bigint,
                   cash_out_cents = cash_out_cents + (op->>'cash_out_cents')::bigint
             WHERE property = p_property AND player_id = op->>'player_id'
               AND gaming_day = (op->>'gaming_day')::date;
            IF NOT FOUND THEN
                INSERT INTO patron_daily_cash (property, player_id, gaming_day, cash_in_cents, cash_out_cents)
                VALUES (p_property, op->>'player_id', (op->>'gaming_day')::date,
                        (op->>'cash_in_cents')::bigint, (op->>'cash_out_cents')::bigint);
            END IF;
        WHEN 'credit_limit' THEN
            INSERT INTO credit_lines (property, player_id, limit_cents)
            VALUES (p_property, op->>'player_id', (op->>'limit_cents')::bigint)
            ON CONFLICT (property, player_id) DO UPDATE SET limit_cents = EXCLUDED.limit_cents;
        WHEN 'marker' THEN
            -- No upsert: its proposed row would be checked against the CHECKs before the
            -- conflict is seen.
            UPDATE credit_lines
               SET outstanding_cents = outstanding_cents + (op->>'outstanding_delta_cents')::bigint
             WHERE property = p_property AND player_id = op->>'player_id'
            RETURNING limit_cents, outstanding_cents INTO v_limit, v_outstanding;
            IF NOT FOUND THEN
                INSERT INTO credit_lines (property, player_id, outstanding_cents)
                VALUES (p_property, op->>'player_id', (op->>'outstanding_delta_cents')::bigint)
                RETURNING limit_cents, outstanding_cents INTO v_limit, v_outstanding;
            END IF;
            -- R-MARK-1: a marker issued is within the line (without a line, the limit is 0). A
            -- line lowered below what is owed stands (migration 0014): a redemption or a
            -- write-off then only brings the amount owed down.
            IF (op->>'outstanding_delta_cents')::bigint > 0 AND v_outstanding > v_limit THEN
                RAISE EXCEPTION 'new row for relation "credit_lines" violates check constraint "credit_lines_within_limit"'
                    USING ERRCODE = '23514', CONSTRAINT = 'credit_lines_within_limit', TABLE = 'credit_lines';
            END IF;
        ELSE
            RAISE EXCEPTION 'chipledger: unknown projection op %', op->>'op' USING ERRCODE = 'CL005',
                DETAIL = json_build_object('reason', 'unknown projection op', 'op', op)::text;
        END CASE;
    END LOOP;
END
$$;
