-- 0018: chipledger_record_refusal takes the end of the refusal's gaming day and keeps no refusal
-- on a day that has ended (R-CHIP-6; sql/fn_chipledger_record_refusal.sql, a new argument); the
-- form before goes, so the name has one definition to grant.
DROP FUNCTION IF EXISTS chipledger_record_refusal(text, text, bytea, bytea, text, text, jsonb, text, text, text, text, text[],
                                                  jsonb, text, date, bytea);
