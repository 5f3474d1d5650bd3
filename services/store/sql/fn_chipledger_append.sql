-- chipledger_append: the appends of one group commit (group.rs), its members, in one statement:
-- one round trip, atomic on its own (the caller may wrap it in a wider transaction). Owned by
-- chipledger_owner and run with its rights (SECURITY DEFINER, pinned search_path): the
-- application role may execute it and nothing else touches the log.
--
-- Each member is judged in queue order exactly as if it ran alone after the ones before it:
-- idempotency (a command id accepted before replays, one refused before answers CL006), expected
-- versions of its streams, balance checks (R-UNIT-3, R-UNIT-4), inline projections. Each check is
-- one statement for the whole group (most of the cost of a statement in PostgreSQL is its own,
-- not its rows'): each member is checked against the committed state plus the members before it,
-- and the first member refused by any check is the one refused, after the projections of the
-- members before it. Members never share a command id (group.rs keeps such a member for the
-- next group), so idempotency is against the rows committed before the group. Then the writes
-- of the whole group, once and in one statement: stream versions and balances (streams and
-- accounts locked in name order), every member's events, event ids, postings and command rows
-- (one INSERT per table), the head, and with it one notification (the new head, the group, the
-- property). No statement here loops over events.
-- Every lookup is a primary-key probe per key, whatever the statistics (the planner settings).
--
-- The hash chain is computed by the store (append.rs, chain.rs format 2), from the head it
-- assumes: p_head_position and p_head_hash (the property's last position and hash), the members
-- it takes for replays (p_replayed), the version of each stream before its member's events
-- (p_base_versions) and the time the events are recorded at (p_recorded_micros, µs since the
-- epoch); p_day_ends_micros is the earliest end of the members' gaming days. Under the
-- per-property head lock, taken once no member is refused by the checks and held to COMMIT,
-- the function compares every assumption with the database. If one differs (another process
-- appended, a member is a replay, the store has no head yet, its clock is behind the head's
-- time or ahead of the database's by more than 5 s, or this clock is past a member's gaming
-- day, which answers this clock's time: the store finds that member outside its day and its
-- server decides it again), nothing is written and
-- every row answers written = false with what the database holds: the head, the replays and
-- the base versions, and a time to record at; the store hashes again and calls again (in a
-- caller's transaction the locks stay held, so the second call meets the same head). If all
-- agree, the positions (the head's + 1, dense, in array order) and the stream versions are
-- assigned here, set-based, from the same numbers the store hashed with, and p_hashes[k] is
-- event k's hash: h_k = sha256(entry_k) over the RFC 8785 entry of chain.rs. The head takes the
-- last event's hash and the recorded time. Replayed members' events have no position and their
-- p_hashes entries are not read.
--
-- Members are contiguous runs of the item arrays: p_*_end[m] is the index of member m's last
-- command, stream, event, posting and projection op (cumulative; member 1 starts at 1). Event
-- stream and posting event indices are 1-based into the group's arrays.
--
-- Errors carry SQLSTATEs of class CL with a JSON DETAIL (crate chipledger-store, error.rs), and
-- the member they belong to in the HINT, `chipledger member <m>` (1-based: the first member for
-- what the group shares, the head and the partitions; an error PostgreSQL raises itself outside
-- a member's projections, such as a lost race on a primary key at the inserts, has no HINT and
-- the store gives it to the first member; only the projections pay for a subtransaction):
--   CL001 version conflict, CL002 command id reused, CL003 unbalanced postings,
--   CL004 negative balance, CL005 invalid request, CL006 command refused earlier,
--   CL007 no partition holds the time the events would be recorded at (nothing is written; the
--   partitions ahead are made by chipledger_ensure_partitions, never here: DDL under the head
--   lock would stall every append of the property behind it), CL009 a gaming day before the
--   property's latest, CL011 an import on a gaming day a cage of the property closed.
-- Events and postings are partitioned by month of recorded_at (migration 0008); event ids are
-- kept unique over all partitions by event_ids, written in the same statement as the events.
-- The body of a member's last event carries its command ids, request hashes and the SHA-256 of
-- its reply (chain.rs), so a stored reply is bound to the chain.
CREATE OR REPLACE FUNCTION chipledger_append(
    p_property        text,
    p_append_ids      uuid[],     -- per member
    p_replies         bytea[],    -- per member
    p_command_end     int[],      -- per member, see above
    p_stream_end      int[],
    p_event_end       int[],
    p_posting_end     int[],
    p_op_end          int[],
    p_command_member  int[],      -- per command: its member
    p_stream_member   int[],      -- per stream: its member
    p_command_ids     text[],
    p_request_hashes  bytea[],
    p_streams         text[],
    p_expected        bigint[],   -- -1 any, 0 no stream, n exact
    p_event_stream    int[],      -- per event: index into p_streams
    p_event_ids       uuid[],
    p_event_types     text[],
    p_schema_versions smallint[],
    p_payloads        jsonb[],
    p_metadata        jsonb[],
    p_hashes          bytea[],    -- per event: its chain hash, see above
    p_posting_event   int[],      -- per posting: index into the events
    p_posting_index   smallint[],
    p_posting_account text[],
    p_posting_amount  bigint[],
    p_projection_ops  jsonb[],
    p_head_position   bigint,     -- what the hashes assume, see above (NULL: no head known)
    p_head_hash       bytea,
    p_replayed        boolean[],  -- per member
    p_base_versions   bigint[],   -- per stream
    p_recorded_micros bigint,
    p_day_ends_micros bigint      -- the earliest end of the members' gaming days (NULL: none)
) RETURNS TABLE (member int, written boolean, replayed boolean, outcome text, reply bytea,
                 base_versions bigint[], head_position bigint, head_hash bytea, recorded_micros bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
DECLARE
    v_members       int := cardinality(p_append_ids);
    v_event_count   int := cardinality(p_event_ids);
    v_member        int := 1;
    m               int;
    k               int;
    c0 int; c1 int; e0 int; o0 int;
    v_found         int;
    v_same          int;
    v_appends       int;
    v_refused       int;
    v_refusal_seq   bigint;
    v_conflict      text;
    v_locked        text[];
    v_accounts      text[];
    v_existing      text[];
    v_balances      bigint[];
    v_account       text;
    v_balance       bigint;
    v_outcome       text;
    v_reply         bytea;
    v_ops           jsonb[];
    v_projected     boolean;
    -- Per member.
    v_replayed      boolean[] := array_fill(false, ARRAY[v_members]);
    v_outcomes      text[] := array_fill(NULL::text, ARRAY[v_members]);
    v_replies       bytea[] := p_replies;
    -- Per stream of the group: its version before its member's events, and after them.
    v_version       bigint[] := '{}';
    v_after         bigint[];
    -- Per event of the group (NULL for a replayed member's).
    v_positions     bigint[] := array_fill(NULL::bigint, ARRAY[v_event_count]);
    v_versions      bigint[] := array_fill(NULL::bigint, ARRAY[v_event_count]);
    v_last          bigint;
    v_hash          bytea;
    v_last_at       timestamptz;
    v_last_day      date;       -- the latest gaming day the property recorded
    v_max_day       date;       -- the latest of the group's
    v_behind        int;        -- the first member recording as it happens on an earlier day
    v_recorded      timestamptz;
    v_micros        bigint;
    v_until         timestamptz;
    v_failed        int;        -- the member refused: the first that a check refuses
    v_stale         int;        -- the first member with a stream not at its expected version
    v_overdrawn     int;        -- the first member taking an account below zero (R-UNIT-4)
    v_creator       int;
    v_write_streams text[];
    v_write_versions bigint[];
    v_state         text;
    v_message       text;
    v_notified      text;
    v_streams_written bigint;
    v_accounts_written bigint;
    v_detail        text;
    v_constraint    text;
    v_twin          int;        -- the first member creating a patron stream in another case
    v_twin_version  bigint;
    v_day_ended     boolean;    -- a member's gaming day ended before the head lock was had
    v_imports       boolean;    -- a member is an import
    v_last_closed   date;       -- the latest gaming day a cage of the property closed
    v_closing       date;       -- the latest the group closes
    v_late_import   int;        -- the first member importing onto a gaming day closed before it
    v_late_day      date;
    v_closed_day    date;
BEGIN
    IF v_members = 0 OR v_event_count = 0 THEN
        RAISE EXCEPTION 'chipledger: empty append' USING ERRCODE = 'CL005', HINT = 'chipledger member ' || v_member,
            DETAIL = json_build_object('reason', 'an append needs at least one event')::text;
    END IF;

    -- Every member has a stream and an event; every event's postings sum to zero (R-UNIT-3).
    -- One statement: the first member without, and the first event whose postings do not.
    SELECT (SELECT min(i) FROM generate_series(1, v_members) AS i
             WHERE p_event_end[i] <= CASE WHEN i = 1 THEN 0 ELSE p_event_end[i - 1] END
                OR p_stream_end[i] <= CASE WHEN i = 1 THEN 0 ELSE p_stream_end[i - 1] END),
           u.e, u.total::text
      INTO v_member, k, v_conflict
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (SELECT p.e, sum(p.amount) AS total
                           FROM unnest(p_posting_event, p_posting_amount) AS p(e, amount)
                          GROUP BY p.e HAVING sum(p.amount) <> 0 ORDER BY p.e LIMIT 1) u ON true;
    IF v_member IS NOT NULL THEN
        RAISE EXCEPTION 'chipledger: empty append' USING ERRCODE = 'CL005', HINT = 'chipledger member ' || v_member,
            DETAIL = json_build_object('reason', 'an append needs at least one event')::text;
    END IF;
    v_member := 1;
    IF k IS NOT NULL THEN
        SELECT min(i) INTO v_member FROM generate_subscripts(p_event_end, 1) AS i WHERE p_event_end[i] >= k;
        e0 := CASE WHEN v_member = 1 THEN 0 ELSE p_event_end[v_member - 1] END;
        RAISE EXCEPTION 'chipledger: postings of event % do not sum to zero', k - e0 USING ERRCODE = 'CL003',
            HINT = 'chipledger member ' || v_member,
            DETAIL = json_build_object('event_index', k - e0 - 1, 'sum_cents', v_conflict::numeric)::text;
    END IF;

    -- Each check below is made for every member at once, each member against the members
    -- before it, and gives the first member it refuses (NULL: none). The member refused is the
    -- first of those; the members before it pass every check, so its refusal is the one a serial
    -- run would give. Their projections are applied first, as a serial run would, in case one
    -- of them is refused there.

    -- 1. Idempotency (independent of the other members: they share no command id): all of a
    --    member's commands known with equal hashes from one append = a replay; a command
    --    refused before with this very request answers that refusal (R-AUDIT-3).
    FOR m, v_found, v_same, v_appends, v_refused, v_refusal_seq IN
        SELECT x.m, count(*)::int,
               count(*) FILTER (WHERE c.request_hash = x.request_hash)::int,
               count(DISTINCT c.append_id)::int,
               count(c.refusal_seq)::int,
               min(c.refusal_seq)
          FROM unnest(p_command_member, p_command_ids, p_request_hashes) AS x(m, command_id, request_hash)
         CROSS JOIN LATERAL (SELECT k.request_hash, k.append_id, k.refusal_seq FROM commands k
                              WHERE k.property = p_property AND k.command_id = x.command_id
                             OFFSET 0) c
         GROUP BY x.m ORDER BY x.m
    LOOP
        c0 := CASE WHEN m = 1 THEN 0 ELSE p_command_end[m - 1] END;
        c1 := p_command_end[m];
        IF v_refused = 0 AND v_same = v_found AND v_found = c1 - c0 AND v_appends = 1 THEN
            SELECT c.outcome, c.reply INTO v_outcome, v_reply FROM commands c
             WHERE c.property = p_property AND c.command_id = p_command_ids[c0 + 1];
            v_replayed[m] := true;
            v_outcomes[m] := v_outcome;
            v_replies[m] := v_reply;
        ELSIF v_failed IS NULL THEN
            v_failed := m;
            IF v_refused = 1 AND v_found = 1 AND v_same = 1 AND c1 - c0 = 1 THEN
                v_state := 'CL006';
                v_message := format('chipledger: command %s was refused before', p_command_ids[c1]);
                v_detail := json_build_object('command_id', p_command_ids[c1], 'refusal_seq', v_refusal_seq)::text;
            ELSE
                SELECT c.command_id INTO v_conflict
                  FROM commands c
                 WHERE c.property = p_property AND c.command_id = ANY (p_command_ids[c0 + 1 : c1])
                 ORDER BY (c.request_hash = p_request_hashes[c0 + array_position(p_command_ids[c0 + 1 : c1], c.command_id)]),
                          array_position(p_command_ids[c0 + 1 : c1], c.command_id)
                 LIMIT 1;
                v_state := 'CL002';
                v_message := 'chipledger: command id reused';
                v_detail := json_build_object('command_id', v_conflict)::text;
            END IF;
        END IF;
    END LOOP;

    -- 2. Expected versions: lock the group's existing streams in name order and read their
    --    versions; a member's stream is at the committed version plus the events the members
    --    before it (not replayed) put on it.
    WITH wanted AS (
        SELECT s.stream, s.m, s.expected, s.ord, NOT v_replayed[s.m] AS live
          FROM unnest(p_streams, p_stream_member, p_expected) WITH ORDINALITY AS s(stream, m, expected, ord)
    ), locked AS MATERIALIZED (
        SELECT l.stream, l.version
          FROM (SELECT DISTINCT w.stream FROM wanted w WHERE w.live ORDER BY w.stream) o
         CROSS JOIN LATERAL (SELECT st.stream, st.version FROM streams st
                              WHERE st.property = p_property AND st.stream = o.stream
                              FOR UPDATE) l
    ), counted AS (
        SELECT w.stream, w.m, w.expected, w.ord, w.live, l.version AS committed, coalesce(n.events, 0) AS events,
               (coalesce(l.version, 0) + coalesce(sum(coalesce(n.events, 0)) FILTER (WHERE w.live)
                    OVER (PARTITION BY w.stream ORDER BY w.m ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))::bigint AS version,
               (coalesce(l.version, 0) + coalesce(sum(coalesce(n.events, 0)) FILTER (WHERE w.live)
                    OVER (PARTITION BY w.stream), 0))::bigint AS final,
               w.ord = min(w.ord) FILTER (WHERE w.live) OVER (PARTITION BY w.stream) AS first_of_stream
          FROM wanted w
          LEFT JOIN locked l ON l.stream = w.stream
          LEFT JOIN (SELECT e.stream_index, count(*) AS events
                       FROM unnest(p_event_stream) AS e(stream_index) GROUP BY e.stream_index) n
                 ON n.stream_index = w.ord
    )
    SELECT array_agg(c.version ORDER BY c.ord),
           min(c.m) FILTER (WHERE c.live AND c.expected >= 0 AND c.expected <> c.version),
           min(c.m) FILTER (WHERE c.live AND c.committed IS NULL AND c.events > 0),
           array_agg(c.stream ORDER BY c.stream) FILTER (WHERE c.first_of_stream AND c.final > coalesce(c.committed, 0)),
           array_agg(c.final ORDER BY c.stream) FILTER (WHERE c.first_of_stream AND c.final > coalesce(c.committed, 0)),
           array_agg(c.stream) FILTER (WHERE c.first_of_stream AND c.committed IS NOT NULL)
      INTO v_version, v_stale, v_creator, v_write_streams, v_write_versions, v_locked
      FROM counted c;
    IF v_stale IS NOT NULL AND (v_failed IS NULL OR v_stale < v_failed) THEN
        -- The member's first stream in conflict, with the version it found.
        SELECT i INTO k
          FROM generate_series(CASE WHEN v_stale = 1 THEN 1 ELSE p_stream_end[v_stale - 1] + 1 END, p_stream_end[v_stale]) AS i
         WHERE p_expected[i] >= 0 AND p_expected[i] <> v_version[i]
         ORDER BY i LIMIT 1;
        v_failed := v_stale;
        v_state := 'CL001';
        v_message := format('chipledger: version conflict on %s', p_streams[k]);
        v_detail := json_build_object('stream', p_streams[k], 'expected', p_expected[k], 'actual', v_version[k])::text;
    END IF;

    -- 3. Account balances: lock the group's existing accounts in account order; a member's
    --    balance of an account is the committed one plus its own postings and those of the
    --    members before it (a missing account starts at zero), and may not be negative where
    --    R-UNIT-4 says so.
    IF cardinality(p_posting_account) > 0 THEN
        WITH d AS (
            SELECT p_stream_member[p_event_stream[q.e]] AS m, q.account, sum(q.amount)::bigint AS delta
              FROM unnest(p_posting_event, p_posting_account, p_posting_amount) AS q(e, account, amount)
             WHERE NOT v_replayed[p_stream_member[p_event_stream[q.e]]]
             GROUP BY 1, 2
        ), b AS MATERIALIZED (
            SELECT l.account, l.balance_cents
              FROM (SELECT DISTINCT d.account FROM d ORDER BY d.account) o
             CROSS JOIN LATERAL (SELECT ab.account, ab.balance_cents FROM account_balances ab
                                  WHERE ab.property = p_property AND ab.account = o.account
                                  FOR UPDATE) l
        ), n AS (
            SELECT d.m, d.account, b.account IS NOT NULL AS existing,
                   (coalesce(b.balance_cents, 0) + sum(d.delta) OVER (PARTITION BY d.account ORDER BY d.m))::bigint AS balance_cents,
                   sum(d.delta) OVER (PARTITION BY d.account) AS total_delta,
                   d.m = max(d.m) OVER (PARTITION BY d.account) AS last
              FROM d LEFT JOIN b ON b.account = d.account
        )
        SELECT array_agg(n.account ORDER BY n.account) FILTER (WHERE n.last AND (NOT n.existing OR n.total_delta <> 0)),
               array_agg(n.balance_cents ORDER BY n.account) FILTER (WHERE n.last AND (NOT n.existing OR n.total_delta <> 0)),
               array_agg(n.account) FILTER (WHERE n.last AND n.existing),
               min(n.m) FILTER (WHERE n.balance_cents < 0 AND chipledger_account_non_negative(n.account))
          INTO v_accounts, v_balances, v_existing, v_overdrawn
          FROM n;
        IF v_overdrawn IS NOT NULL THEN
            -- The account and balance of that member's first R-UNIT-4 violation (only when there is one).
            WITH d AS (
                SELECT p_stream_member[p_event_stream[q.e]] AS m, q.account, sum(q.amount)::bigint AS delta
                  FROM unnest(p_posting_event, p_posting_account, p_posting_amount) AS q(e, account, amount)
                 WHERE NOT v_replayed[p_stream_member[p_event_stream[q.e]]]
                 GROUP BY 1, 2
            ), n AS (
                SELECT d.m, d.account,
                       (coalesce((SELECT ab.balance_cents FROM account_balances ab
                                   WHERE ab.property = p_property AND ab.account = d.account), 0)
                        + sum(d.delta) OVER (PARTITION BY d.account ORDER BY d.m))::bigint AS balance_cents
                  FROM d
            )
            SELECT n.account, n.balance_cents INTO v_account, v_balance
              FROM n WHERE n.m = v_overdrawn AND n.balance_cents < 0 AND chipledger_account_non_negative(n.account)
             ORDER BY n.account LIMIT 1;
        END IF;
        IF v_overdrawn IS NOT NULL AND (v_failed IS NULL OR v_overdrawn < v_failed) THEN
            v_failed := v_overdrawn;
            v_state := 'CL004';
            v_message := format('chipledger: account %s would go negative (R-UNIT-4)', v_account);
            v_detail := json_build_object('account', v_account, 'balance_cents', v_balance)::text;
        END IF;
    END IF;

    -- 4. The head, when no member is refused: every member a replay writes nothing; otherwise
    --    the head lock, held from here to COMMIT, and the store's assumptions compared with it.
    IF v_failed IS NULL THEN
        v_member := array_position(v_replayed, false);
        IF v_member IS NULL THEN
            RETURN QUERY SELECT i, true, true, v_outcomes[i], v_replies[i], NULL::bigint[], NULL::bigint, NULL::bytea,
                                NULL::bigint
                           FROM generate_series(1, v_members) AS i;
            RETURN;
        END IF;
        -- With the head, the end of the last partition (it only ever grows).
        SELECT h.last_position, h.last_hash, h.last_recorded_at, h.last_gaming_day, h.last_closed_day,
               (SELECT max(l.until_at) FROM log_partitions l)
          INTO v_last, v_hash, v_last_at, v_last_day, v_last_closed, v_until
          FROM property_heads h WHERE h.property = p_property FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO property_heads (property) VALUES (p_property) ON CONFLICT DO NOTHING;
            SELECT h.last_position, h.last_hash, h.last_recorded_at, h.last_gaming_day, h.last_closed_day,
                   (SELECT max(l.until_at) FROM log_partitions l)
              INTO v_last, v_hash, v_last_at, v_last_day, v_last_closed, v_until
              FROM property_heads h WHERE h.property = p_property FOR UPDATE;
        END IF;
        -- R-CHIP-6 with R-AUDIT-4: what is recorded as it happens is never on a gaming day
        --    before the latest the property recorded, whichever replica recorded it (the insider
        --    pass: one replica's clock ahead, then set right, and a patron's cash went on two
        --    days 28 ms apart, no CTR). Under the head lock, so every writer sees the latest; the
        --    member behind is refused (CL009, with the day) and its server decides it again on
        --    that day. An import names its own time and is checked against its streams.
        SELECT max((e.md->>'gaming_day')::date),
               min(mm.m) FILTER (WHERE NOT (e.md ? 'imported_by') AND (e.md->>'gaming_day')::date < v_last_day),
               bool_or(e.md ? 'imported_by')
          INTO v_max_day, v_behind, v_imports
          FROM generate_series(1, v_members) AS mm(m)
         CROSS JOIN LATERAL unnest(p_metadata[CASE WHEN mm.m = 1 THEN 1 ELSE p_event_end[mm.m - 1] + 1 END : p_event_end[mm.m]]) AS e(md)
         WHERE NOT v_replayed[mm.m];
        IF v_behind IS NOT NULL THEN
            RAISE EXCEPTION 'chipledger: a gaming day before the property''s latest, %', v_last_day
                USING ERRCODE = 'CL009', DETAIL = json_build_object('gaming_day', v_last_day::text)::text,
                      HINT = 'chipledger member ' || v_behind;
        END IF;
        -- R-CHIP-5, R-CHIP-6: a gaming day a cage of the property closed is final, for imports
        --    too (the cage pass: an admin's import opened a new cage on a day closed and reported
        --    before, sold chips there and closed it, and the day's liability and a patron's cash
        --    changed). The latest closed day is kept with the head; each import event is checked
        --    against it and against the closes recorded before it in the group. Run only when
        --    the group imports or closes a day.
        IF v_imports OR 'GamingDayClosed' = ANY (p_event_types) THEN
            WITH ev AS (
                SELECT mm.m, e.k,
                       CASE WHEN p_event_types[e.k] = 'GamingDayClosed' THEN (p_payloads[e.k]->>'gaming_day')::date END AS closes,
                       CASE WHEN p_metadata[e.k] ? 'imported_by' THEN (p_metadata[e.k]->>'gaming_day')::date END AS imported_on
                  FROM generate_series(1, v_members) AS mm(m)
                 CROSS JOIN LATERAL generate_series(CASE WHEN mm.m = 1 THEN 1 ELSE p_event_end[mm.m - 1] + 1 END, p_event_end[mm.m]) AS e(k)
                 WHERE NOT v_replayed[mm.m]
            ), o AS (
                SELECT ev.m, ev.k, ev.closes, ev.imported_on,
                       greatest(v_last_closed, max(ev.closes) OVER (ORDER BY ev.k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS closed
                  FROM ev
            )
            SELECT max(o.closes),
                   (array_agg(o.m ORDER BY o.k) FILTER (WHERE o.imported_on <= o.closed))[1],
                   (array_agg(o.imported_on ORDER BY o.k) FILTER (WHERE o.imported_on <= o.closed))[1],
                   (array_agg(o.closed ORDER BY o.k) FILTER (WHERE o.imported_on <= o.closed))[1]
              INTO v_closing, v_late_import, v_late_day, v_closed_day
              FROM o;
            IF v_late_import IS NOT NULL THEN
                RAISE EXCEPTION 'chipledger: an import on gaming day %, closed through %', v_late_day, v_closed_day
                    USING ERRCODE = 'CL011', HINT = 'chipledger member ' || v_late_import,
                          DETAIL = json_build_object('gaming_day', v_late_day::text, 'closed_through', v_closed_day::text)::text;
            END IF;
        END IF;
        -- A patron stream the group creates whose name differs only in case from one the
        --    property holds, or from one a member before it creates, is in conflict (CL001):
        --    the server decides that member again and its case check refuses it (R-REBUY-1: two
        --    spellings of a new patron written at once, by two replicas or in one group, were
        --    two patrons). Under the head lock: a creator committed before it is seen.
        IF v_creator IS NOT NULL THEN
            WITH created AS (
                SELECT s.stream, s.m, s.ord
                  FROM unnest(p_streams, p_stream_member) WITH ORDINALITY AS s(stream, m, ord)
                 WHERE NOT v_replayed[s.m] AND s.stream LIKE 'player-%'
                   AND NOT (s.stream = ANY (coalesce(v_locked, '{}')))
                   AND s.ord IN (SELECT e.stream_index FROM unnest(p_event_stream) AS e(stream_index))
            )
            SELECT c.m, c.ord, t.version INTO v_twin, k, v_twin_version
              FROM created c
             CROSS JOIN LATERAL (
                    SELECT st.version FROM streams st
                     WHERE st.property = p_property AND lower(st.stream) = lower(c.stream) AND st.stream <> c.stream
                    UNION ALL
                    SELECT 0 FROM created o WHERE o.m < c.m AND lower(o.stream) = lower(c.stream) AND o.stream <> c.stream
                    LIMIT 1) t
             ORDER BY c.m, c.ord LIMIT 1;
            IF v_twin IS NOT NULL THEN
                v_failed := v_twin;
                v_state := 'CL001';
                v_message := format('chipledger: version conflict on %s (a patron stream in another case)', p_streams[k]);
                v_detail := json_build_object('stream', p_streams[k], 'expected', p_expected[k], 'actual', v_twin_version)::text;
            END IF;
        END IF;
        v_recorded := 'epoch'::timestamptz + p_recorded_micros * interval '1 microsecond';
        -- R-CHIP-6: a member decided before its gaming day's end whose commit comes after it
        --    (the head lock waited on a slow commit) is not written on the day that ended: the
        --    store is answered this clock's time, finds the member outside its day and its
        --    server decides it again on the next (the crash pass: a $5,000 sale decided a second
        --    before the cutoff and committed two after was added to a day already reported).
        v_day_ended := p_day_ends_micros IS NOT NULL
                       AND clock_timestamp() >= 'epoch'::timestamptz + p_day_ends_micros * interval '1 microsecond';
        IF p_head_position IS DISTINCT FROM v_last OR p_head_hash IS DISTINCT FROM v_hash
           OR p_replayed IS DISTINCT FROM v_replayed
           OR cardinality(p_base_versions) IS DISTINCT FROM cardinality(p_streams)
           OR cardinality(p_hashes) IS DISTINCT FROM v_event_count
           OR EXISTS (SELECT 1 FROM unnest(p_stream_member, p_base_versions, v_version) AS s(m, assumed, actual)
                       WHERE NOT v_replayed[s.m] AND s.assumed IS DISTINCT FROM s.actual)
           OR v_recorded IS NULL OR v_recorded < v_last_at OR v_day_ended
           OR v_recorded > greatest(clock_timestamp() + interval '5 seconds', v_last_at) THEN
            -- The time to record at: the one asked for (when its writer decided, by its reading
            -- of this clock), or this clock if it asks none or one too far ahead; never before
            -- the head's.
            v_micros := (extract(epoch FROM greatest(
                            CASE WHEN v_recorded IS NULL OR v_day_ended OR v_recorded > clock_timestamp() + interval '5 seconds'
                                 THEN clock_timestamp() ELSE v_recorded END,
                            v_last_at)) * 1000000)::bigint;
            RETURN QUERY SELECT i, false, v_replayed[i], v_outcomes[i], v_replies[i], v_version, v_last, v_hash, v_micros
                           FROM generate_series(1, v_members) AS i;
            RETURN;
        END IF;
    END IF;

    -- 5. Domain projections of the members written (up to the member refused), then its refusal.
    --    The ops of table play (seated, departed, cash) are applied set-based, one statement per
    --    projection for the whole group, to the state the same ops give one after the other
    --    (verify.rs, Recomputed::apply, is that definition): a patron's session takes the last
    --    of its seated and departed ops (a row is made only by a seat, as op by op), the
    --    departure log takes the departures in op order after the patron's last kept entry and
    --    keeps the 32 most recent, a patron's cash on a day takes the sum of its ops. A group
    --    with any other op (credit lines, markers, a departure taken back: cage and correction
    --    work, where each intermediate state is checked) goes op by op, member by member
    --    (fn_chipledger_apply_projection_ops.sql); so does a group whose set-based statements
    --    fail (a projection's constraint, a race on its keys), which rolls them back and says
    --    whose op it was.
    --    A group without ops (most of a table's commands) runs none of these statements.
    v_ops := '{}';
    IF p_op_end[v_members] > 0 THEN
        SELECT coalesce(array_agg(p_projection_ops[i] ORDER BY i), '{}')
          INTO v_ops
          FROM generate_series(1, coalesce(v_failed - 1, v_members)) AS mm(m)
         CROSS JOIN LATERAL generate_series(CASE WHEN mm.m = 1 THEN 1 ELSE p_op_end[mm.m - 1] + 1 END, p_op_end[mm.m]) AS i
         WHERE NOT v_replayed[mm.m];
    END IF;
    v_projected := cardinality(v_ops) = 0;
    IF NOT v_projected AND NOT EXISTS (SELECT 1 FROM unnest(v_ops) AS o(op) WHERE o.op->>'op' NOT IN ('seated', 'departed', 'cash')) THEN
        BEGIN
            WITH o AS (
                SELECT x.op, x.i, x.op->>'player_id' AS player_id FROM unnest(v_ops) WITH ORDINALITY AS x(op, i)
                 WHERE x.op->>'op' IN ('seated', 'departed')
            ), last_op AS (
                SELECT DISTINCT ON (o.player_id) o.player_id, o.op, o.op->>'op' = 'seated' AS seated,
                       bool_or(o.op->>'op' = 'seated') OVER (PARTITION BY o.player_id) AS seated_here
                  FROM o
                 ORDER BY o.player_id, o.i DESC
            ), cleared AS (
                UPDATE player_sessions ps
                   SET table_id = NULL, seat = NULL, game_key = NULL, seated_at_ms = NULL, seated_event_id = NULL
                  FROM last_op l
                 WHERE NOT l.seated_here AND ps.property = p_property AND ps.player_id = l.player_id
            )
            INSERT INTO player_sessions AS ps (property, player_id, table_id, seat, game_key, seated_at_ms, seated_event_id)
            -- A patron seated in the group and gone again: the row its seat made, cleared.
            SELECT p_property, l.player_id, v.op->>'table_id', (v.op->>'seat')::int, v.op->>'game_key',
                   (v.op->>'at_ms')::bigint, (v.op->>'event_id')::uuid
              FROM last_op l
             CROSS JOIN LATERAL (SELECT CASE WHEN l.seated THEN l.op END AS op) v
             WHERE l.seated_here
             ORDER BY l.player_id
            ON CONFLICT (property, player_id) DO UPDATE
               SET table_id = EXCLUDED.table_id, seat = EXCLUDED.seat, game_key = EXCLUDED.game_key,
                   seated_at_ms = EXCLUDED.seated_at_ms, seated_event_id = EXCLUDED.seated_event_id;

            WITH d AS (
                SELECT x.op, x.op->>'player_id' AS player_id,
                       row_number() OVER (PARTITION BY x.op->>'player_id' ORDER BY x.i) AS n
                  FROM unnest(v_ops) WITH ORDINALITY AS x(op, i)
                 WHERE x.op->>'op' = 'departed'
            ), base AS (
                SELECT p.player_id,
                       coalesce((SELECT max(l.seq) FROM player_departure_log l
                                  WHERE l.property = p_property AND l.player_id = p.player_id), 0) AS seq
                  FROM (SELECT DISTINCT d.player_id FROM d) p
            )
            INSERT INTO player_departure_log (property, player_id, seq, game_key, table_id, amount_left_cents, departed_at_ms)
            SELECT p_property, d.player_id, b.seq + d.n, d.op->>'game_key', d.op->>'table_id',
                   (d.op->>'amount_left_cents')::bigint, (d.op->>'at_ms')::bigint
              FROM d JOIN base b ON b.player_id = d.player_id;
            DELETE FROM player_departure_log l
             USING (SELECT DISTINCT x.op->>'player_id' AS player_id FROM unnest(v_ops) AS x(op)
                     WHERE x.op->>'op' = 'departed') p
             WHERE l.property = p_property AND l.player_id = p.player_id
               AND l.seq <= (SELECT k.seq FROM player_departure_log k
                              WHERE k.property = p_property AND k.player_id = p.player_id
                              ORDER BY k.seq DESC OFFSET 32 LIMIT 1);

            -- No upsert: a correction's negative sum would meet the CHECKs in the proposed row.
            WITH c AS (
                SELECT x.op->>'player_id' AS player_id, (x.op->>'gaming_day')::date AS gaming_day,
                       sum((x.op->>'cash_in_cents')::bigint)::bigint AS cash_in,
                       sum((x.op->>'cash_out_cents')::bigint)::bigint AS cash_out
                  FROM unnest(v_ops) AS x(op)
                 WHERE x.op->>'op' = 'cash'
                 GROUP BY 1, 2
            ), updated AS (
                UPDATE patron_daily_cash pc
                   SET cash_in_cents = pc.cash_in_cents + c.cash_in, cash_out_cents = pc.cash_out_cents + c.cash_out
                  FROM c
                 WHERE pc.property = p_property AND pc.player_id = c.player_id AND pc.gaming_day = c.gaming_day
                RETURNING pc.player_id, pc.gaming_day
            )
            INSERT INTO patron_daily_cash (property, player_id, gaming_day, cash_in_cents, cash_out_cents)
            SELECT p_property, c.player_id, c.gaming_day, c.cash_in, c.cash_out
              FROM c
             WHERE NOT EXISTS (SELECT 1 FROM updated u WHERE u.player_id = c.player_id AND u.gaming_day = c.gaming_day);
            v_projected := true;
        EXCEPTION
            -- A lock held elsewhere past the lock timeout: the whole call gives up now, not after
            -- a second wait on the op-by-op path (the wave-2 pass: 20 s for a 10 s timeout).
            WHEN lock_not_available THEN
                RAISE;
            WHEN OTHERS THEN
                -- Rolled back: the op-by-op path below meets the same error and names its member.
                v_projected := false;
        END;
    END IF;
    IF NOT v_projected THEN
        FOR m IN 1 .. coalesce(v_failed - 1, v_members) LOOP
            CONTINUE WHEN v_replayed[m];
            v_member := m;
            o0 := CASE WHEN m = 1 THEN 0 ELSE p_op_end[m - 1] END;
            IF p_op_end[m] > o0 THEN
                BEGIN
                    PERFORM chipledger_apply_projection_ops(p_property, p_projection_ops[o0 + 1 : p_op_end[m]]);
                EXCEPTION WHEN OTHERS THEN
                    -- A projection's own constraint (a credit line, R-MARK-1) or a race on its keys:
                    -- the same error, with the member it belongs to.
                    GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
                                            v_detail = PG_EXCEPTION_DETAIL, v_constraint = CONSTRAINT_NAME;
                    RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, DETAIL = v_detail,
                        HINT = 'chipledger member ' || m, CONSTRAINT = v_constraint;
                END;
            END IF;
        END LOOP;
    END IF;
    IF v_failed IS NOT NULL THEN
        v_member := v_failed;
        RAISE EXCEPTION '%', v_message USING ERRCODE = v_state, DETAIL = v_detail, HINT = 'chipledger member ' || v_member;
    END IF;

    v_member := array_position(v_replayed, false);
    IF v_until IS NULL OR v_recorded >= v_until THEN
        RAISE EXCEPTION 'chipledger: no partition holds recorded_at %', v_recorded USING ERRCODE = 'CL007',
            HINT = 'chipledger member ' || v_member,
            DETAIL = json_build_object('recorded_at_micros', p_recorded_micros,
                                       'partitions_until_micros', (extract(epoch FROM v_until) * 1000000)::bigint)::text;
    END IF;

    -- 6. Positions and stream versions, set-based: the live members' events in array order
    --    continue the head; each stream counts on from its base version. Then each member's
    --    outcome, as stored for its commands and answered to replays.
    --    One statement: the positions and versions per event, the new head (the last live
    --    event's position and hash), each stream's version after its member's events, and the
    --    outcomes made of them.
    WITH n AS (
        SELECT e.k, e.s,
               CASE WHEN e.live THEN v_last + count(*) FILTER (WHERE e.live) OVER (ORDER BY e.k) END AS position,
               CASE WHEN e.live THEN v_version[e.s] + count(*) OVER (PARTITION BY e.s ORDER BY e.k) END AS stream_version
          FROM (SELECT x.k, x.s, NOT v_replayed[p_stream_member[x.s]] AS live
                  FROM unnest(p_event_stream) WITH ORDINALITY AS x(s, k)) e
    ), placed AS (
        SELECT array_agg(n.position ORDER BY n.k) AS positions, array_agg(n.stream_version ORDER BY n.k) AS versions,
               max(n.position) AS last_position,
               (array_agg(p_hashes[n.k] ORDER BY n.position DESC) FILTER (WHERE n.position IS NOT NULL))[1] AS last_hash,
               (SELECT array_agg(v_version[s.i] + coalesce(c.events, 0) ORDER BY s.i)
                  FROM generate_subscripts(p_streams, 1) AS s(i)
                  LEFT JOIN (SELECT m.s, count(*) AS events FROM n m GROUP BY m.s) c ON c.s = s.i) AS versions_after
          FROM n
    )
    SELECT p.positions, p.versions, p.last_position, p.last_hash, p.versions_after,
           (SELECT array_agg(CASE WHEN v_replayed[i] THEN v_outcomes[i] ELSE json_build_object(
                       'append_id', p_append_ids[i],
                       'first_position', p.positions[CASE WHEN i = 1 THEN 1 ELSE p_event_end[i - 1] + 1 END],
                       'last_position', p.positions[p_event_end[i]],
                       'last_hash', encode(p_hashes[p_event_end[i]], 'hex'),
                       'recorded_at_micros', p_recorded_micros,
                       'stream_versions', (SELECT json_agg(json_build_array(p_streams[s], p.versions_after[s]) ORDER BY s)
                                             FROM generate_series(CASE WHEN i = 1 THEN 1 ELSE p_stream_end[i - 1] + 1 END,
                                                                  p_stream_end[i]) AS s))::text END
                   ORDER BY i)
              FROM generate_series(1, v_members) AS i)
      INTO v_positions, v_versions, v_last, v_hash, v_after, v_outcomes
      FROM placed p;

    -- The writes of the whole group, one statement: the streams' versions and the balances
    -- (rows locked in name order), events, event ids, postings, command rows and the head.
    WITH written_streams AS (
        INSERT INTO streams AS st (property, stream, version)
        SELECT p_property, w.stream, w.version
          FROM unnest(v_write_streams, v_write_versions) AS w(stream, version)
         ORDER BY w.stream
        ON CONFLICT (property, stream) DO UPDATE SET version = EXCLUDED.version
         WHERE st.stream = ANY (v_locked)
        RETURNING 1
    ), written_balances AS (
        INSERT INTO account_balances AS ab (property, account, balance_cents)
        SELECT p_property, a.account, a.balance_cents
          FROM unnest(v_accounts, v_balances) AS a(account, balance_cents)
         ORDER BY a.account
        ON CONFLICT (property, account) DO UPDATE SET balance_cents = EXCLUDED.balance_cents
         WHERE ab.account = ANY (v_existing)
        RETURNING 1
    ), written_events AS (
        INSERT INTO events (property, position, stream, stream_version, event_id, event_type,
                            schema_version, payload, metadata, recorded_at, hash, chain_format)
        SELECT p_property, e.position, p_streams[e.stream_index], e.stream_version, e.event_id,
               e.event_type, e.schema_version, e.payload, e.metadata, v_recorded, e.hash, 2
          FROM unnest(p_event_stream, p_event_ids, p_event_types, p_schema_versions, p_payloads, p_metadata,
                      v_positions, v_versions, p_hashes)
               AS e(stream_index, event_id, event_type, schema_version, payload, metadata, position, stream_version, hash)
         WHERE e.position IS NOT NULL
    ), written_ids AS (
        INSERT INTO event_ids (event_id, property, position)
        SELECT e.event_id, p_property, e.position
          FROM unnest(p_event_ids, v_positions) AS e(event_id, position)
         WHERE e.position IS NOT NULL
    ), written_postings AS (
        INSERT INTO postings (property, position, posting_index, account, amount_cents, recorded_at)
        SELECT p_property, v_positions[p.e], p.i, p.account, p.amount, v_recorded
          FROM unnest(p_posting_event, p_posting_index, p_posting_account, p_posting_amount)
               AS p(e, i, account, amount)
         WHERE v_positions[p.e] IS NOT NULL
    ), written_commands AS (
        INSERT INTO commands (property, command_id, request_hash, append_id, outcome, reply, recorded_at, last_position)
        SELECT p_property, c.command_id, c.request_hash, p_append_ids[c.m], v_outcomes[c.m], p_replies[c.m],
               v_recorded, v_positions[p_event_end[c.m]]
          FROM unnest(p_command_member, p_command_ids, p_request_hashes) AS c(m, command_id, request_hash)
         WHERE NOT v_replayed[c.m]
    )
    -- The notification goes with the head, in the same statement: '<head> <first append id>
    -- <property>'; a subscriber of another property, one at this head already, or one handed
    -- the group by the process that wrote it, reads nothing for it (subscription.rs).
    UPDATE property_heads SET last_position = v_last, last_hash = v_hash, last_recorded_at = v_recorded,
                              last_gaming_day = greatest(last_gaming_day, v_max_day),
                              last_closed_day = greatest(last_closed_day, v_closing)
     WHERE property = p_property
    RETURNING pg_notify('chipledger_events', v_last || ' ' || p_append_ids[1] || ' ' || p_property)::text,
              (SELECT count(*) FROM written_streams), (SELECT count(*) FROM written_balances)
         INTO v_notified, v_streams_written, v_accounts_written;
    -- A stream or an account that another append created after this one's checks (before it
    -- had the head lock) is not written over: the row is missing from what was written, and
    -- the whole statement goes back (the notification with it); the store retries the member,
    -- which then reports the version conflict (a stream) or is judged on the balance (an
    -- account). Such an append also moved the head, so the comparison of step 4 answers first;
    -- this stays as the guard of the rows themselves.
    IF v_streams_written <> coalesce(cardinality(v_write_streams), 0) THEN
        v_member := coalesce(v_creator, array_position(v_replayed, false));
        RAISE EXCEPTION 'chipledger: stream created concurrently' USING ERRCODE = 'unique_violation',
            HINT = 'chipledger member ' || v_member;
    END IF;
    IF v_accounts_written <> coalesce(cardinality(v_accounts), 0) THEN
        v_member := array_position(v_replayed, false);
        RAISE EXCEPTION 'chipledger: account created concurrently' USING ERRCODE = 'unique_violation',
            HINT = 'chipledger member ' || v_member;
    END IF;
    RETURN QUERY SELECT i, true, v_replayed[i], v_outcomes[i], v_replies[i], NULL::bigint[], v_last, v_hash,
                        p_recorded_micros
                   FROM generate_series(1, v_members) AS i;
END
$$;
