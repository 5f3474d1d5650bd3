-- 0010: chipledger_append takes the events' chain hashes from the store, with the head they
-- continue (sql/fn_chipledger_append.sql, new arguments); the form of 0009 goes, so the name has
-- one definition to grant.
DROP FUNCTION IF EXISTS chipledger_append(text, uuid[], bytea[], int[], int[], int[], int[], int[], int[], int[], text[],
                                          bytea[], text[], bigint[], int[], uuid[], text[], smallint[], jsonb[], jsonb[],
                                          bytea[], int[], smallint[], text[], bigint[], jsonb[]);
