-- chipledger event store: events, postings, idempotency, hash chain head, rejections.
-- Forward-only. Every table is keyed by property (the tenant, one casino): positions and the
-- hash chain are per property, so a property can later move to its own PostgreSQL cluster.

-- The application role. Created NOLOGIN here; an operator (or Store::set_app_password) gives it
-- LOGIN and a password. It never owns a table, so it can neither disable triggers nor truncate.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chipledger_app') THEN
        CREATE ROLE chipledger_app NOLOGIN;
    END IF;
EXCEPTION
    -- Two databases of one cluster migrating at the same moment race on the cluster-wide role.
    WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

-- One row per property: the commit point. Holding its row lock from "take positions" to
-- COMMIT is what makes global positions dense and visible strictly in position order.
-- last_position/last_hash also make a truncated tail detectable (see verify_chain).
CREATE TABLE property_heads (
    property         text        PRIMARY KEY CHECK (length(property) BETWEEN 1 AND 64),
    last_position    bigint      NOT NULL DEFAULT 0 CHECK (last_position >= 0),
    last_hash        bytea       NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'
                                 CHECK (length(last_hash) = 32),
    last_recorded_at timestamptz NOT NULL DEFAULT '-infinity'
);

-- Current version of every stream; the row lock serialises writers of one stream.
CREATE TABLE streams (
    property text   NOT NULL,
    stream   text   NOT NULL CHECK (length(stream) BETWEEN 1 AND 128),
    version  bigint NOT NULL CHECK (version > 0),
    PRIMARY KEY (property, stream)
);

-- The log. Append-only (R-AUDIT-1): refused by trigger and by privileges.
-- Plain table today; it is partitionable by time later (RANGE on recorded_at, which is
-- monotone in position per property) at the price of putting recorded_at into its unique keys.
CREATE TABLE events (
    property       text        NOT NULL,
    position       bigint      NOT NULL CHECK (position > 0),
    stream         text        NOT NULL,
    stream_version bigint      NOT NULL CHECK (stream_version > 0),
    event_id       uuid        NOT NULL,
    event_type     text        NOT NULL CHECK (length(event_type) BETWEEN 1 AND 128),
    schema_version smallint    NOT NULL,
    payload        jsonb       NOT NULL,
    metadata       jsonb       NOT NULL,
    recorded_at    timestamptz NOT NULL,
    hash           bytea       NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (property, position),
    UNIQUE (property, stream, stream_version),
    UNIQUE (event_id)
);
CREATE INDEX events_recorded_at ON events (property, recorded_at);

-- Double-entry postings (R-UNIT-3), one row per leg, append-only.
CREATE TABLE postings (
    property      text     NOT NULL,
    position      bigint   NOT NULL,
    posting_index smallint NOT NULL CHECK (posting_index >= 0),
    account       text     NOT NULL CHECK (length(account) BETWEEN 1 AND 128),
    amount_cents  bigint   NOT NULL,
    PRIMARY KEY (property, position, posting_index)
);
CREATE INDEX postings_account ON postings (property, account, position) INCLUDE (amount_cents);

-- Idempotency: every command id ever accepted, permanently, with the hash of its request and
-- the exact outcome returned, so a retry gets the same bytes back.
CREATE TABLE commands (
    property     text        NOT NULL,
    command_id   text        NOT NULL CHECK (length(command_id) BETWEEN 1 AND 128),
    request_hash bytea       NOT NULL CHECK (length(request_hash) = 32),
    append_id    uuid        NOT NULL,
    outcome      text        NOT NULL,
    reply        bytea       NOT NULL,
    recorded_at  timestamptz NOT NULL,
    PRIMARY KEY (property, command_id)
);

-- Rejected commands, kept for auditors (R-AUDIT-3, R-STAKE-2). They never move chips.
CREATE TABLE rejections (
    property      text        NOT NULL,
    rejection_id  bigint      GENERATED ALWAYS AS IDENTITY,
    command_id    text        NOT NULL,
    reason_code   text        NOT NULL,
    rule_id       text        NOT NULL,
    numbers       jsonb       NOT NULL,
    detail        text        NOT NULL,
    actor_id      text        NOT NULL,
    actor_role    text        NOT NULL,
    device        text,
    streams       text[]      NOT NULL,
    request       jsonb       NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (property, rejection_id)
);

-- Accounts that may never go negative (R-UNIT-4): seat stacks, tray denominations, kitty,
-- pots, pocket chips. Keys follow chipledger_rules::Account::key().
CREATE FUNCTION chipledger_account_non_negative(account text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN account ~ '^table/[^/]+/(seat/[^/]+|tray/[^/]+|kitty|pot/[^/]+)$'
        OR account ~ '^player/[^/]+/pocket$';

-- Generic inline projection: current balance of every account, updated in the append
-- transaction. The CHECK is the database's own backstop for R-UNIT-4.
CREATE TABLE account_balances (
    property      text   NOT NULL,
    account       text   NOT NULL,
    balance_cents bigint NOT NULL,
    PRIMARY KEY (property, account),
    CONSTRAINT account_balances_non_negative
        CHECK (balance_cents >= 0 OR NOT chipledger_account_non_negative(account))
);

-- Append-only enforcement in the database itself.
CREATE FUNCTION chipledger_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'chipledger: % on % is forbidden: the table is append-only (R-AUDIT-1)',
        TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
    FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings
    FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER commands_append_only BEFORE UPDATE OR DELETE ON commands
    FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER commands_no_truncate BEFORE TRUNCATE ON commands
    FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER rejections_append_only BEFORE UPDATE OR DELETE ON rejections
    FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER rejections_no_truncate BEFORE TRUNCATE ON rejections
    FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change();

-- The append, in one statement (one round trip; the caller may wrap it in a wider transaction).
-- Order inside: idempotency check, stream locks in name order (no deadlocks between streams),
-- balance checks, inline projection writes, and only then the per-property head lock, so the
-- head is held for the few microseconds of hashing and inserting plus the COMMIT.
-- Errors carry SQLSTATEs of class CL with a JSON DETAIL the Rust side turns into typed errors:
--   CL001 version conflict, CL002 idempotency conflict, CL003 unbalanced postings,
--   CL004 negative balance, CL005 invalid request.
-- Event hash: h_n = sha256(h_{n-1} || be64(position) || be64(recorded_at unix micros)
--                          || be64(stream_version) || body_n), body_n built by the store
-- (crate chipledger-store, module chain) from the other fields; h_0 = 32 zero bytes.
CREATE FUNCTION chipledger_append(
    p_property        text,
    p_append_id       uuid,
    p_command_ids     text[],
    p_request_hashes  bytea[],
    p_reply           bytea,
    p_streams         text[],
    p_expected        bigint[],   -- -1 any, 0 no stream, n exact
    p_event_stream    int[],      -- 1-based index into p_streams, per event
    p_event_ids       uuid[],
    p_event_types     text[],
    p_schema_versions smallint[],
    p_payloads        jsonb[],
    p_metadata        jsonb[],
    p_bodies          bytea[],
    p_posting_event   int[],      -- 1-based index into the events, per posting
    p_posting_index   smallint[],
    p_posting_account text[],
    p_posting_amount  bigint[],
    p_projection_ops  jsonb[]
) RETURNS TABLE (replayed boolean, outcome text, reply bytea)
LANGUAGE plpgsql AS $$
DECLARE
    v_stream_count int := cardinality(p_streams);
    v_event_count  int := cardinality(p_event_ids);
    v_found        int;
    v_same         int;
    v_appends      int;
    v_conflict     text;
    v_current      bigint[];
    v_next         bigint[];
    v_versions     bigint[] := '{}';
    v_hashes       bytea[] := '{}';
    v_last         bigint;
    v_hash         bytea;
    v_last_at      timestamptz;
    v_recorded     timestamptz;
    v_micros       bigint;
    v_account      text;
    v_balance      bigint;
    v_outcome      text;
    k              int;
BEGIN
    IF v_event_count = 0 OR v_stream_count = 0 THEN
        RAISE EXCEPTION 'chipledger: empty append' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'an append needs at least one event')::text;
    END IF;

    -- 1. Idempotency: all commands known with equal hashes from one append = replay.
    IF cardinality(p_command_ids) > 0 THEN
        SELECT count(*)::int,
               count(*) FILTER (WHERE c.request_hash = p_request_hashes[array_position(p_command_ids, c.command_id)])::int,
               count(DISTINCT c.append_id)::int
          INTO v_found, v_same, v_appends
          FROM commands c
         WHERE c.property = p_property AND c.command_id = ANY (p_command_ids);
        IF v_found > 0 THEN
            IF v_same = v_found AND v_found = cardinality(p_command_ids) AND v_appends = 1 THEN
                RETURN QUERY SELECT true, c.outcome, c.reply FROM commands c
                     WHERE c.property = p_property AND c.command_id = p_command_ids[1];
                RETURN;
            END IF;
            SELECT c.command_id INTO v_conflict
              FROM commands c
             WHERE c.property = p_property AND c.command_id = ANY (p_command_ids)
             ORDER BY (c.request_hash = p_request_hashes[array_position(p_command_ids, c.command_id)]),
                      array_position(p_command_ids, c.command_id)
             LIMIT 1;
            RAISE EXCEPTION 'chipledger: command id reused' USING ERRCODE = 'CL002',
                DETAIL = json_build_object('command_id', v_conflict)::text;
        END IF;
    END IF;

    -- 2. Expected versions, streams locked in name order.
    SELECT array_agg(coalesce(s.version, 0) ORDER BY i.ord) INTO v_current
      FROM unnest(p_streams) WITH ORDINALITY AS i(stream, ord)
      LEFT JOIN (SELECT st.stream, st.version FROM streams st
                  WHERE st.property = p_property AND st.stream = ANY (p_streams)
                  ORDER BY st.stream FOR UPDATE) s ON s.stream = i.stream;
    FOR k IN 1 .. v_stream_count LOOP
        IF p_expected[k] >= 0 AND p_expected[k] <> v_current[k] THEN
            RAISE EXCEPTION 'chipledger: version conflict on %', p_streams[k] USING ERRCODE = 'CL001',
                DETAIL = json_build_object('stream', p_streams[k], 'expected', p_expected[k],
                                           'actual', v_current[k])::text;
        END IF;
    END LOOP;
    SELECT array_agg(v_current[i.ord] + (SELECT count(*) FROM unnest(p_event_stream) e WHERE e = i.ord) ORDER BY i.ord)
      INTO v_next FROM generate_subscripts(p_streams, 1) AS i(ord);
    UPDATE streams st SET version = v_next[i.ord]
      FROM generate_subscripts(p_streams, 1) AS i(ord)
     WHERE st.property = p_property AND st.stream = p_streams[i.ord]
       AND v_current[i.ord] > 0 AND v_next[i.ord] > v_current[i.ord];
    -- A concurrent creator of the same stream makes this fail with unique_violation;
    -- the store retries the whole append, which then reports the version conflict.
    INSERT INTO streams (property, stream, version)
    SELECT p_property, p_streams[i.ord], v_next[i.ord]
      FROM generate_subscripts(p_streams, 1) AS i(ord)
     WHERE v_current[i.ord] = 0 AND v_next[i.ord] > 0
     ORDER BY p_streams[i.ord];

    -- 3. Every event's postings sum to zero (R-UNIT-3).
    SELECT p.e, sum(p.amount)::text INTO k, v_conflict
      FROM unnest(p_posting_event, p_posting_amount) AS p(e, amount)
     GROUP BY p.e HAVING sum(p.amount) <> 0 ORDER BY p.e LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'chipledger: postings of event % do not sum to zero', k USING ERRCODE = 'CL003',
            DETAIL = json_build_object('event_index', k - 1, 'sum_cents', v_conflict::numeric)::text;
    END IF;

    -- 4. Account balances: create missing rows at zero (a concurrent creator just makes us
    --    wait), lock all rows in account order, check R-UNIT-4, apply.
    IF cardinality(p_posting_account) > 0 THEN
        INSERT INTO account_balances (property, account, balance_cents)
        SELECT DISTINCT p_property, p.account, 0::bigint
          FROM unnest(p_posting_account) AS p(account)
         WHERE NOT EXISTS (SELECT 1 FROM account_balances b
                            WHERE b.property = p_property AND b.account = p.account)
         ORDER BY p.account
        ON CONFLICT (property, account) DO NOTHING;
        PERFORM 1 FROM account_balances b
          WHERE b.property = p_property AND b.account = ANY (p_posting_account)
          ORDER BY b.account FOR UPDATE;
        SELECT d.account, b.balance_cents + d.delta INTO v_account, v_balance
          FROM (SELECT p.account, sum(p.amount)::bigint AS delta
                  FROM unnest(p_posting_account, p_posting_amount) AS p(account, amount)
                 GROUP BY p.account) d
          JOIN account_balances b ON b.property = p_property AND b.account = d.account
         WHERE b.balance_cents + d.delta < 0
           AND chipledger_account_non_negative(d.account)
         ORDER BY d.account LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'chipledger: account % would go negative (R-UNIT-4)', v_account
                USING ERRCODE = 'CL004',
                DETAIL = json_build_object('account', v_account, 'balance_cents', v_balance)::text;
        END IF;
        WITH d AS (SELECT p.account, sum(p.amount)::bigint AS delta
                     FROM unnest(p_posting_account, p_posting_amount) AS p(account, amount)
                    GROUP BY p.account)
        UPDATE account_balances b SET balance_cents = b.balance_cents + d.delta
          FROM d WHERE b.property = p_property AND b.account = d.account AND d.delta <> 0;
    END IF;

    -- 5. Domain projections (written by chipledger_apply_projection_ops, see 0002).
    IF cardinality(p_projection_ops) > 0 THEN
        PERFORM chipledger_apply_projection_ops(p_property, p_projection_ops);
    END IF;

    -- 6. Commit point: the head row lock is held from here to COMMIT.
    SELECT h.last_position, h.last_hash, h.last_recorded_at INTO v_last, v_hash, v_last_at
      FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO property_heads (property) VALUES (p_property) ON CONFLICT DO NOTHING;
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO v_last, v_hash, v_last_at
          FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    END IF;
    v_recorded := greatest(clock_timestamp(), v_last_at);
    v_micros := (extract(epoch FROM v_recorded) * 1000000)::bigint;
    v_next := v_current;
    FOR k IN 1 .. v_event_count LOOP
        v_next[p_event_stream[k]] := v_next[p_event_stream[k]] + 1;
        v_versions[k] := v_next[p_event_stream[k]];
        v_hash := sha256(v_hash || int8send(v_last + k) || int8send(v_micros)
                         || int8send(v_versions[k]) || p_bodies[k]);
        v_hashes[k] := v_hash;
    END LOOP;

    INSERT INTO events (property, position, stream, stream_version, event_id, event_type,
                        schema_version, payload, metadata, recorded_at, hash)
    SELECT p_property, v_last + e.ord, p_streams[e.stream_index], v_versions[e.ord], e.event_id,
           e.event_type, e.schema_version, e.payload, e.metadata, v_recorded, v_hashes[e.ord]
      FROM unnest(p_event_stream, p_event_ids, p_event_types, p_schema_versions, p_payloads, p_metadata)
           WITH ORDINALITY AS e(stream_index, event_id, event_type, schema_version, payload, metadata, ord);

    INSERT INTO postings (property, position, posting_index, account, amount_cents)
    SELECT p_property, v_last + p.e, p.i, p.account, p.amount
      FROM unnest(p_posting_event, p_posting_index, p_posting_account, p_posting_amount)
           AS p(e, i, account, amount);

    UPDATE property_heads SET last_position = v_last + v_event_count, last_hash = v_hash,
           last_recorded_at = v_recorded
     WHERE property = p_property;

    v_outcome := json_build_object(
        'append_id', p_append_id,
        'first_position', v_last + 1,
        'last_position', v_last + v_event_count,
        'last_hash', encode(v_hash, 'hex'),
        'recorded_at_micros', v_micros,
        'stream_versions', (SELECT json_agg(json_build_array(p_streams[i.ord], v_next[i.ord]) ORDER BY i.ord)
                              FROM generate_subscripts(p_streams, 1) AS i(ord)))::text;

    INSERT INTO commands (property, command_id, request_hash, append_id, outcome, reply, recorded_at)
    SELECT p_property, c.command_id, c.request_hash, p_append_id, v_outcome, p_reply, v_recorded
      FROM unnest(p_command_ids, p_request_hashes) AS c(command_id, request_hash);

    PERFORM pg_notify('chipledger_events', p_property);
    RETURN QUERY SELECT false, v_outcome, p_reply;
END
$$;
