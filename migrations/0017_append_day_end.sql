-- 0017: chipledger_append takes the earliest end of its members' gaming days, and writes no
-- member whose day ended before the head lock was had (R-CHIP-6; sql/fn_chipledger_append.sql,
-- a new argument); the form of 0010 goes, so the name has one definition to grant.
DROP FUNCTION IF EXISTS chipledger_append(text, uuid[], bytea[], int[], int[], int[], int[], int[], int[], int[], text[],
                                          bytea[], text[], bigint[], int[], uuid[], text[], smallint[], jsonb[], jsonb[],
                                          bytea[], int[], smallint[], text[], bigint[], jsonb[], bigint, bytea, boolean[],
                                          bigint[], bigint);
