-- 0009: chipledger_append takes the members of a group commit (sql/fn_chipledger_append.sql,
-- new arguments); the one-append form of 0007 goes, so the name has one definition to grant.
DROP FUNCTION IF EXISTS chipledger_append(text, uuid, text[], bytea[], bytea, text[], bigint[], int[], uuid[], text[],
                                          smallint[], jsonb[], jsonb[], bytea[], int[], smallint[], text[], bigint[],
                                          jsonb[]);
