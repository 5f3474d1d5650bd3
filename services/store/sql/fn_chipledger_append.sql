-- chipledger_append: one append, in one statement (one round trip; the caller may wrap it in a
-- wider transaction). Owned by chipledger_owner and run with its rights (SECURITY DEFINER, pinned
-- search_path): the application role may execute it and nothing else touches the log.
--
-- Order inside: idempotency (a command id accepted before replays, one refused before answers
-- CL006), stream locks in name order, balance checks (R-UNIT-3, R-UNIT-4), inline projections,
-- and only then the per-property head lock, held for the hashing and inserts plus the COMMIT:
-- positions are dense and become visible strictly in order. Every lookup is a primary-key probe
-- per key, whatever the statistics (the planner settings below; the profile is in 0006).
-- Errors carry SQLSTATEs of class CL with a JSON DETAIL (crate chipledger-store, error.rs):
--   CL001 version conflict, CL002 command id reused, CL003 unbalanced postings,
--   CL004 negative balance, CL005 invalid request, CL006 command refused earlier,
--   CL007 no partition holds the time the events would be recorded at (nothing is written; the
--   partitions ahead are made by chipledger_ensure_partitions, never here: DDL under the head
--   lock would stall every append of the property behind it).
-- Events and postings are partitioned by month of recorded_at (migration 0008); event ids are
-- kept unique over all partitions by event_ids, written in the same statement as the events.
-- Chain (format 2, chain.rs): p_entries[k] is the start of event k's chain entry in RFC 8785
-- form, `{"body":<body>,"format":2,"kind":"event","position":`, built by the store; the entry
-- ends here with the values assigned under the head lock, and h_k = sha256(entry_k) where
--   entry_k = p_entries[k] || position || ',"prev":"' || hex(h_{k-1}) || '","recorded_at_micros":'
--             || micros || ',"stream_version":' || version || '}'.
-- The body of an append's last event also carries the append's command ids, request hashes and
-- the SHA-256 of p_reply, so a stored reply is bound to the chain.
CREATE OR REPLACE FUNCTION chipledger_append(
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
    p_entries         bytea[],    -- chain entry starts, see above
    p_posting_event   int[],      -- 1-based index into the events, per posting
    p_posting_index   smallint[],
    p_posting_account text[],
    p_posting_amount  bigint[],
    p_projection_ops  jsonb[]
) RETURNS TABLE (replayed boolean, outcome text, reply bytea)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
    v_stream_count  int := cardinality(p_streams);
    v_event_count   int := cardinality(p_event_ids);
    v_found         int;
    v_same          int;
    v_appends       int;
    v_refused       int;
    v_refusal_seq   bigint;
    v_conflict      text;
    v_current       bigint[];
    v_next          bigint[];
    v_locked        text[];
    v_stream_writes int := 0;
    v_accounts      text[];
    v_existing      text[];
    v_balances      bigint[];
    v_written       int;
    v_versions      bigint[] := '{}';
    v_hashes        bytea[] := '{}';
    v_last          bigint;
    v_hash          bytea;
    v_last_at       timestamptz;
    v_recorded      timestamptz;
    v_micros        bigint;
    v_account       text;
    v_balance       bigint;
    v_outcome       text;
    v_until         timestamptz;
    k               int;
BEGIN
    IF v_event_count = 0 OR v_stream_count = 0 THEN
        RAISE EXCEPTION 'chipledger: empty append' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'an append needs at least one event')::text;
    END IF;

    -- 1. Idempotency: all commands known with equal hashes from one append = replay; a command
    --    refused before with this very request answers that refusal (R-AUDIT-3).
    IF cardinality(p_command_ids) > 0 THEN
        SELECT count(*)::int,
               count(*) FILTER (WHERE c.request_hash = x.request_hash)::int,
               count(DISTINCT c.append_id)::int,
               count(c.refusal_seq)::int,
               min(c.refusal_seq)
          INTO v_found, v_same, v_appends, v_refused, v_refusal_seq
          FROM unnest(p_command_ids, p_request_hashes) AS x(command_id, request_hash)
         CROSS JOIN LATERAL (SELECT k.request_hash, k.append_id, k.refusal_seq FROM commands k
                              WHERE k.property = p_property AND k.command_id = x.command_id
                             OFFSET 0) c;
        IF v_found > 0 THEN
            IF v_refused = 1 AND v_found = 1 AND v_same = 1 AND cardinality(p_command_ids) = 1 THEN
                RAISE EXCEPTION 'chipledger: command % was refused before', p_command_ids[1] USING ERRCODE = 'CL006',
                    DETAIL = json_build_object('command_id', p_command_ids[1], 'refusal_seq', v_refusal_seq)::text;
            END IF;
            IF v_refused = 0 AND v_same = v_found AND v_found = cardinality(p_command_ids) AND v_appends = 1 THEN
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

    -- 2. Expected versions: lock the existing streams in name order, read their versions and
    --    count this append's events per stream, in one statement.
    SELECT array_agg(coalesce(s.version, 0) ORDER BY i.ord),
           array_agg(coalesce(s.version, 0) + coalesce(n.events, 0) ORDER BY i.ord),
           array_agg(s.stream) FILTER (WHERE s.stream IS NOT NULL)
      INTO v_current, v_next, v_locked
      FROM unnest(p_streams) WITH ORDINALITY AS i(stream, ord)
      LEFT JOIN (SELECT l.stream, l.version
                   FROM (SELECT u.stream FROM unnest(p_streams) AS u(stream) ORDER BY u.stream) o
                  CROSS JOIN LATERAL (SELECT st.stream, st.version FROM streams st
                                       WHERE st.property = p_property AND st.stream = o.stream
                                       FOR UPDATE) l) s ON s.stream = i.stream
      LEFT JOIN (SELECT e.stream_index, count(*) AS events
                   FROM unnest(p_event_stream) AS e(stream_index) GROUP BY e.stream_index) n
             ON n.stream_index = i.ord;
    FOR k IN 1 .. v_stream_count LOOP
        IF p_expected[k] >= 0 AND p_expected[k] <> v_current[k] THEN
            RAISE EXCEPTION 'chipledger: version conflict on %', p_streams[k] USING ERRCODE = 'CL001',
                DETAIL = json_build_object('stream', p_streams[k], 'expected', p_expected[k],
                                           'actual', v_current[k])::text;
        END IF;
        IF v_next[k] > v_current[k] THEN
            v_stream_writes := v_stream_writes + 1;
        END IF;
    END LOOP;
    INSERT INTO streams AS st (property, stream, version)
    SELECT p_property, p_streams[i.ord], v_next[i.ord]
      FROM generate_subscripts(p_streams, 1) AS i(ord)
     WHERE v_next[i.ord] > v_current[i.ord]
     ORDER BY p_streams[i.ord]
    ON CONFLICT (property, stream) DO UPDATE SET version = EXCLUDED.version
     WHERE st.stream = ANY (v_locked);
    GET DIAGNOSTICS v_written = ROW_COUNT;
    IF v_written <> v_stream_writes THEN
        -- A concurrent append created one of the streams: the store retries the whole append,
        -- which then reports the version conflict.
        RAISE EXCEPTION 'chipledger: stream created concurrently' USING ERRCODE = 'unique_violation';
    END IF;

    -- 3. Every event's postings sum to zero (R-UNIT-3).
    SELECT p.e, sum(p.amount)::text INTO k, v_conflict
      FROM unnest(p_posting_event, p_posting_amount) AS p(e, amount)
     GROUP BY p.e HAVING sum(p.amount) <> 0 ORDER BY p.e LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'chipledger: postings of event % do not sum to zero', k USING ERRCODE = 'CL003',
            DETAIL = json_build_object('event_index', k - 1, 'sum_cents', v_conflict::numeric)::text;
    END IF;

    -- 4. Account balances: lock the existing rows in account order, compute the new balances
    --    (a missing account starts at zero) and the first R-UNIT-4 violation; then write.
    IF cardinality(p_posting_account) > 0 THEN
        WITH d AS (SELECT p.account, sum(p.amount)::bigint AS delta
                     FROM unnest(p_posting_account, p_posting_amount) AS p(account, amount)
                    GROUP BY p.account),
             b AS MATERIALIZED (SELECT l.account, l.balance_cents
                                  FROM (SELECT d.account FROM d ORDER BY d.account) o
                                 CROSS JOIN LATERAL (SELECT ab.account, ab.balance_cents FROM account_balances ab
                                                      WHERE ab.property = p_property AND ab.account = o.account
                                                      FOR UPDATE) l),
             n AS (SELECT d.account, d.delta, b.account IS NOT NULL AS existing,
                          coalesce(b.balance_cents, 0) + d.delta AS balance_cents
                     FROM d LEFT JOIN b ON b.account = d.account)
        SELECT array_agg(n.account ORDER BY n.account) FILTER (WHERE NOT n.existing OR n.delta <> 0),
               array_agg(n.balance_cents ORDER BY n.account) FILTER (WHERE NOT n.existing OR n.delta <> 0),
               array_agg(n.account) FILTER (WHERE n.existing),
               (array_agg(n.account ORDER BY n.account)
                    FILTER (WHERE n.balance_cents < 0 AND chipledger_account_non_negative(n.account)))[1],
               (array_agg(n.balance_cents ORDER BY n.account)
                    FILTER (WHERE n.balance_cents < 0 AND chipledger_account_non_negative(n.account)))[1]
          INTO v_accounts, v_balances, v_existing, v_account, v_balance
          FROM n;
        IF v_account IS NOT NULL THEN
            RAISE EXCEPTION 'chipledger: account % would go negative (R-UNIT-4)', v_account
                USING ERRCODE = 'CL004',
                DETAIL = json_build_object('account', v_account, 'balance_cents', v_balance)::text;
        END IF;
        INSERT INTO account_balances AS ab (property, account, balance_cents)
        SELECT p_property, a.account, a.balance_cents
          FROM unnest(v_accounts, v_balances) AS a(account, balance_cents)
         ORDER BY a.account
        ON CONFLICT (property, account) DO UPDATE SET balance_cents = EXCLUDED.balance_cents
         WHERE ab.account = ANY (v_existing);
        GET DIAGNOSTICS v_written = ROW_COUNT;
        IF v_written <> coalesce(cardinality(v_accounts), 0) THEN
            -- A concurrent append created one of the accounts: retried like a new stream.
            RAISE EXCEPTION 'chipledger: account created concurrently' USING ERRCODE = 'unique_violation';
        END IF;
    END IF;

    -- 5. Domain projections (chipledger_apply_projection_ops, migrations 0002, 0003, 0005).
    IF cardinality(p_projection_ops) > 0 THEN
        PERFORM chipledger_apply_projection_ops(p_property, p_projection_ops);
    END IF;

    -- 6. The end of the last partition, read before the head lock (it only ever grows).
    SELECT max(l.until_at) INTO v_until FROM log_partitions l;

    -- 7. Commit point: the head row lock is held from here to COMMIT.
    SELECT h.last_position, h.last_hash, h.last_recorded_at INTO v_last, v_hash, v_last_at
      FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO property_heads (property) VALUES (p_property) ON CONFLICT DO NOTHING;
        SELECT h.last_position, h.last_hash, h.last_recorded_at INTO v_last, v_hash, v_last_at
          FROM property_heads h WHERE h.property = p_property FOR UPDATE;
    END IF;
    v_recorded := greatest(clock_timestamp(), v_last_at);
    v_micros := (extract(epoch FROM v_recorded) * 1000000)::bigint;
    IF v_until IS NULL OR v_recorded >= v_until THEN
        RAISE EXCEPTION 'chipledger: no partition holds recorded_at %', v_recorded USING ERRCODE = 'CL007',
            DETAIL = json_build_object('recorded_at_micros', v_micros,
                                       'partitions_until_micros', (extract(epoch FROM v_until) * 1000000)::bigint)::text;
    END IF;
    v_next := v_current;
    FOR k IN 1 .. v_event_count LOOP
        v_next[p_event_stream[k]] := v_next[p_event_stream[k]] + 1;
        v_versions[k] := v_next[p_event_stream[k]];
        v_hash := sha256(p_entries[k] || convert_to(format('%s,"prev":"%s","recorded_at_micros":%s,"stream_version":%s}',
                                                            v_last + k, encode(v_hash, 'hex'), v_micros, v_versions[k]),
                                                     'UTF8'));
        v_hashes[k] := v_hash;
    END LOOP;

    v_outcome := json_build_object(
        'append_id', p_append_id,
        'first_position', v_last + 1,
        'last_position', v_last + v_event_count,
        'last_hash', encode(v_hash, 'hex'),
        'recorded_at_micros', v_micros,
        'stream_versions', (SELECT json_agg(json_build_array(p_streams[i.ord], v_next[i.ord]) ORDER BY i.ord)
                              FROM generate_subscripts(p_streams, 1) AS i(ord)))::text;

    WITH written_events AS (
        INSERT INTO events (property, position, stream, stream_version, event_id, event_type,
                            schema_version, payload, metadata, recorded_at, hash, chain_format)
        SELECT p_property, v_last + e.ord, p_streams[e.stream_index], v_versions[e.ord], e.event_id,
               e.event_type, e.schema_version, e.payload, e.metadata, v_recorded, v_hashes[e.ord], 2
          FROM unnest(p_event_stream, p_event_ids, p_event_types, p_schema_versions, p_payloads, p_metadata)
               WITH ORDINALITY AS e(stream_index, event_id, event_type, schema_version, payload, metadata, ord)
    ), written_ids AS (
        INSERT INTO event_ids (event_id, property, position)
        SELECT e.event_id, p_property, v_last + e.ord
          FROM unnest(p_event_ids) WITH ORDINALITY AS e(event_id, ord)
    ), written_postings AS (
        INSERT INTO postings (property, position, posting_index, account, amount_cents, recorded_at)
        SELECT p_property, v_last + p.e, p.i, p.account, p.amount, v_recorded
          FROM unnest(p_posting_event, p_posting_index, p_posting_account, p_posting_amount)
               AS p(e, i, account, amount)
    ), written_commands AS (
        INSERT INTO commands (property, command_id, request_hash, append_id, outcome, reply, recorded_at, last_position)
        SELECT p_property, c.command_id, c.request_hash, p_append_id, v_outcome, p_reply, v_recorded,
               v_last + v_event_count
          FROM unnest(p_command_ids, p_request_hashes) AS c(command_id, request_hash)
    )
    UPDATE property_heads SET last_position = v_last + v_event_count, last_hash = v_hash,
           last_recorded_at = v_recorded
     WHERE property = p_property;

    PERFORM pg_notify('chipledger_events', p_property);
    RETURN QUERY SELECT false, v_outcome, p_reply;
END
$$;
