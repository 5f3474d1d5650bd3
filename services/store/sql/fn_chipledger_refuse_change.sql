-- chipledger_refuse_change: the append-only tables' triggers (R-AUDIT-1): every UPDATE,
-- DELETE and TRUNCATE of events, postings, commands and rejections is refused (migration 0001
-- made it and its triggers).
CREATE OR REPLACE FUNCTION chipledger_refuse_change()
RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'chipledger: % on % is forbidden: the table is append-only (R-AUDIT-1)',
        TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
