-- 0003: the departures projection mirrors the rules state exactly, corrections included, and a
-- player session knows when the player sat down.
--
-- R-REBUY-1 / R-AUDIT-1. The rules keep, per patron, the list of the last MAX_DEPARTURES (32,
-- chipledger_rules::player) departures over all games, most recent last; a departure correction
-- (PlayerReversal::Departure { table_id, at_unix_ms }) removes every entry with that table and
-- time, and the re-buy wait then reads the most recent remaining departure of the game. A table
-- with only the latest departure per game cannot take one back (the previous one is gone), so
-- the list itself is projected here and `player_departures` becomes a view over it.

CREATE TABLE player_departure_log (
    property          text   NOT NULL,
    player_id         text   NOT NULL,
    -- Order of the departures of one patron (their order on the player stream).
    seq               bigint NOT NULL CHECK (seq > 0),
    game_key          text   NOT NULL,
    table_id          text   NOT NULL,
    amount_left_cents bigint NOT NULL CHECK (amount_left_cents >= 0),
    departed_at_ms    bigint NOT NULL,
    PRIMARY KEY (property, player_id, seq)
);

-- A departure: append it, then keep only the 32 most recent of the patron, as the rules do
-- (they drop the oldest before pushing when 32 are held). Two writers of one patron without the
-- player stream lock meet on the primary key (unique_violation: the store retries).
CREATE FUNCTION chipledger_project_departure(p_property text, p_player_id text, p_game_key text,
                                             p_table_id text, p_amount_left_cents bigint,
                                             p_departed_at_ms bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_seq bigint;
BEGIN
    SELECT coalesce(max(seq), 0) + 1 INTO v_seq
      FROM player_departure_log WHERE property = p_property AND player_id = p_player_id;
    INSERT INTO player_departure_log (property, player_id, seq, game_key, table_id, amount_left_cents, departed_at_ms)
    VALUES (p_property, p_player_id, v_seq, p_game_key, p_table_id, p_amount_left_cents, p_departed_at_ms);
    IF v_seq > 32 THEN
        DELETE FROM player_departure_log l
         WHERE l.property = p_property AND l.player_id = p_player_id
           AND l.seq < (SELECT min(k.seq) FROM (SELECT seq FROM player_departure_log
                                                 WHERE property = p_property AND player_id = p_player_id
                                                 ORDER BY seq DESC LIMIT 32) k);
    END IF;
END
$$;

-- A departure taken back (R-AUDIT-1): every entry with that table and time, as the rules' retain.
CREATE FUNCTION chipledger_project_departure_reversed(p_property text, p_player_id text,
                                                      p_table_id text, p_departed_at_ms bigint) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM player_departure_log
     WHERE property = p_property AND player_id = p_player_id
       AND table_id = p_table_id AND departed_at_ms = p_departed_at_ms;
$$;

-- The log is the system of record: rebuild the list by replaying the rules' own player events
-- (LeftTable, Corrected with a Departure reversal) in log order. This is exactly the rules state
-- (PlayerState::evolve). Rows of the old table that no LeftTable event backs (ops given directly
-- by a caller) are carried over after them, oldest first.
DO $$
DECLARE
    e record;
BEGIN
    FOR e IN
        SELECT ev.property, substr(ev.stream, 8) AS player_id, ev.payload
          FROM events ev
         WHERE ev.stream LIKE 'player-%'
           AND ((ev.event_type = 'LeftTable' AND ev.payload->>'type' = 'LeftTable')
             OR (ev.event_type = 'Corrected' AND ev.payload->>'type' = 'Corrected'
                 AND ev.payload->'reversal'->>'kind' = 'Departure'))
         ORDER BY ev.property, ev.position
    LOOP
        IF e.payload->>'type' = 'LeftTable' THEN
            PERFORM chipledger_project_departure(e.property, e.player_id, e.payload->>'game_key',
                e.payload->>'table_id', (e.payload->>'amount_cents')::bigint, (e.payload->>'at_unix_ms')::bigint);
        ELSE
            PERFORM chipledger_project_departure_reversed(e.property, e.player_id,
                e.payload->'reversal'->>'table_id', (e.payload->'reversal'->>'at_unix_ms')::bigint);
        END IF;
    END LOOP;
    FOR e IN
        SELECT d.* FROM player_departures d
         WHERE NOT EXISTS (SELECT 1 FROM events ev
                            WHERE ev.property = d.property AND ev.stream = 'player-' || d.player_id
                              AND ev.event_type = 'LeftTable' AND ev.payload->>'type' = 'LeftTable'
                              AND ev.payload->>'table_id' = d.table_id
                              AND ev.payload->>'at_unix_ms' = d.departed_at_ms::text)
         ORDER BY d.departed_at_ms
    LOOP
        PERFORM chipledger_project_departure(e.property, e.player_id, e.game_key, e.table_id,
                                             e.amount_left_cents, e.departed_at_ms);
    END LOOP;
END
$$;

DROP TABLE player_departures;

-- The re-buy input as the rules read it: the most recent remaining departure per game.
CREATE VIEW player_departures AS
SELECT DISTINCT ON (property, player_id, game_key)
       property, player_id, game_key, table_id, amount_left_cents, departed_at_ms
  FROM player_departure_log
 ORDER BY property, player_id, game_key, seq DESC;

-- The rules' JoinedTable carries no time: the session keeps the event that seated the player,
-- and its seated time is that event's recorded_at (read through the view player_seatings).
-- A caller that knows the time gives it in the op (seated_at_ms), and it wins.
ALTER TABLE player_sessions ADD COLUMN seated_event_id uuid;

CREATE VIEW player_seatings AS
SELECT s.property, s.player_id, s.table_id, s.seat, s.game_key,
       coalesce(s.seated_at_ms, floor(extract(epoch FROM e.recorded_at) * 1000)::bigint) AS seated_at_ms
  FROM player_sessions s
  LEFT JOIN events e ON e.event_id = s.seated_event_id AND e.property = s.property;

CREATE OR REPLACE FUNCTION chipledger_apply_projection_ops(p_property text, p_ops jsonb[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    op jsonb;
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
            INSERT INTO patron_daily_cash (property, player_id, gaming_day, cash_in_cents, cash_out_cents)
            VALUES (p_property, op->>'player_id', (op->>'gaming_day')::date,
                    (op->>'cash_in_cents')::bigint, (op->>'cash_out_cents')::bigint)
            ON CONFLICT (property, player_id, gaming_day) DO UPDATE
               SET cash_in_cents = patron_daily_cash.cash_in_cents + EXCLUDED.cash_in_cents,
                   cash_out_cents = patron_daily_cash.cash_out_cents + EXCLUDED.cash_out_cents;
        WHEN 'credit_limit' THEN
            INSERT INTO credit_lines (property, player_id, limit_cents)
            VALUES (p_property, op->>'player_id', (op->>'limit_cents')::bigint)
            ON CONFLICT (property, player_id) DO UPDATE SET limit_cents = EXCLUDED.limit_cents;
        WHEN 'marker' THEN
            -- No upsert: its proposed row would be checked against the CHECKs before the
            -- conflict is seen. Without a credit line the insert meets limit 0 and is refused.
            UPDATE credit_lines
               SET outstanding_cents = outstanding_cents + (op->>'outstanding_delta_cents')::bigint
             WHERE property = p_property AND player_id = op->>'player_id';
            IF NOT FOUND THEN
                INSERT INTO credit_lines (property, player_id, outstanding_cents)
                VALUES (p_property, op->>'player_id', (op->>'outstanding_delta_cents')::bigint);
            END IF;
        ELSE
            RAISE EXCEPTION 'chipledger: unknown projection op %', op->>'op' USING ERRCODE = 'CL005',
                DETAIL = json_build_object('reason', 'unknown projection op', 'op', op)::text;
        END CASE;
    END LOOP;
END
$$;

GRANT SELECT, INSERT, DELETE ON player_departure_log TO chipledger_app;
GRANT SELECT ON player_departures, player_seatings TO chipledger_app;
