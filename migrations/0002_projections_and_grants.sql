-- Domain inline projections (written in the append transaction, used to enforce rules),
-- async report tables with their checkpoints, and the application role's privileges.

-- Seat stacks (R-STAKE-4), tray inventory by denomination (R-CHIP-1) and IOUs/markers are
-- balances of their accounts: views over the generic account_balances projection.
CREATE VIEW seat_stacks AS
SELECT property, split_part(account, '/', 2) AS table_id, split_part(account, '/', 4)::int AS seat,
       balance_cents AS stack_cents
  FROM account_balances WHERE account ~ '^table/[^/]+/seat/[0-9]+$';

CREATE VIEW tray_inventory AS
SELECT property, split_part(account, '/', 2) AS table_id,
       split_part(account, '/', 4)::bigint AS denomination_cents, balance_cents AS value_cents
  FROM account_balances WHERE account ~ '^table/[^/]+/tray/[0-9]+$';

-- Player sessions: where a player sits now, and the last departure per game and limits, the
-- input of the re-buy wait (R-REBUY-1).
CREATE TABLE player_sessions (
    property    text    NOT NULL,
    player_id   text    NOT NULL,
    table_id    text,
    seat        int,
    game_key    text,
    seated_at_ms bigint,
    PRIMARY KEY (property, player_id)
);

CREATE TABLE player_departures (
    property          text   NOT NULL,
    player_id         text   NOT NULL,
    game_key          text   NOT NULL,
    table_id          text   NOT NULL,
    amount_left_cents bigint NOT NULL CHECK (amount_left_cents >= 0),
    departed_at_ms    bigint NOT NULL,
    PRIMARY KEY (property, player_id, game_key)
);

-- Cash in and cash out per patron per gaming day, never netted (R-AUDIT-4).
CREATE TABLE patron_daily_cash (
    property       text   NOT NULL,
    player_id      text   NOT NULL,
    gaming_day     date   NOT NULL,
    cash_in_cents  bigint NOT NULL DEFAULT 0 CHECK (cash_in_cents >= 0),
    cash_out_cents bigint NOT NULL DEFAULT 0 CHECK (cash_out_cents >= 0),
    PRIMARY KEY (property, player_id, gaming_day)
);

-- Credit lines and outstanding markers (R-MARK-1): never above the approved line.
CREATE TABLE credit_lines (
    property          text   NOT NULL,
    player_id         text   NOT NULL,
    limit_cents       bigint NOT NULL DEFAULT 0 CHECK (limit_cents >= 0),
    outstanding_cents bigint NOT NULL DEFAULT 0 CHECK (outstanding_cents >= 0),
    PRIMARY KEY (property, player_id),
    CONSTRAINT credit_lines_within_limit CHECK (outstanding_cents <= limit_cents)
);

-- Apply the domain projection operations of one append (built in Rust by
-- chipledger_store::projection from the rules crate's events). Unknown ops are refused.
CREATE FUNCTION chipledger_apply_projection_ops(p_property text, p_ops jsonb[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    op jsonb;
BEGIN
    FOREACH op IN ARRAY p_ops LOOP
        CASE op->>'op'
        WHEN 'seated' THEN
            INSERT INTO player_sessions (property, player_id, table_id, seat, game_key, seated_at_ms)
            VALUES (p_property, op->>'player_id', op->>'table_id', (op->>'seat')::int,
                    op->>'game_key', (op->>'at_ms')::bigint)
            ON CONFLICT (property, player_id) DO UPDATE
               SET table_id = EXCLUDED.table_id, seat = EXCLUDED.seat,
                   game_key = EXCLUDED.game_key, seated_at_ms = EXCLUDED.seated_at_ms;
        WHEN 'departed' THEN
            UPDATE player_sessions SET table_id = NULL, seat = NULL, game_key = NULL, seated_at_ms = NULL
             WHERE property = p_property AND player_id = op->>'player_id';
            INSERT INTO player_departures (property, player_id, game_key, table_id, amount_left_cents, departed_at_ms)
            VALUES (p_property, op->>'player_id', op->>'game_key', op->>'table_id',
                    (op->>'amount_left_cents')::bigint, (op->>'at_ms')::bigint)
            ON CONFLICT (property, player_id, game_key) DO UPDATE
               SET table_id = EXCLUDED.table_id, amount_left_cents = EXCLUDED.amount_left_cents,
                   departed_at_ms = EXCLUDED.departed_at_ms;
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

-- Async projections: one checkpoint per (projection, property), written in the same
-- transaction as the projection's rows.
CREATE TABLE projection_checkpoints (
    projection text   NOT NULL,
    property   text   NOT NULL,
    position   bigint NOT NULL CHECK (position >= 0),
    PRIMARY KEY (projection, property)
);

-- Report: movements per table per gaming day (cage reconciliation).
CREATE TABLE report_table_day (
    property        text   NOT NULL,
    table_id        text   NOT NULL,
    gaming_day      text   NOT NULL,
    event_count     bigint NOT NULL,
    movement_count  bigint NOT NULL,
    chips_in_cents  bigint NOT NULL,
    chips_out_cents bigint NOT NULL,
    last_position   bigint NOT NULL,
    PRIMARY KEY (property, table_id, gaming_day)
);

-- Privileges: append-only tables get INSERT and SELECT only; state tables also UPDATE.
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO chipledger_app;
GRANT SELECT, INSERT ON events, postings, commands, rejections TO chipledger_app;
GRANT SELECT, INSERT, UPDATE ON property_heads, streams, account_balances, player_sessions,
    player_departures, patron_daily_cash, credit_lines TO chipledger_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_checkpoints, report_table_day TO chipledger_app;
GRANT SELECT ON seat_stacks, tray_inventory TO chipledger_app;
