-- 0014: a credit line may be lowered or suspended while markers are outstanding (R-MARK-1: a
-- credit officer cuts credit for a patron who still owes; the insiders' pass had it answered
-- INTERNAL by this CHECK and kept nowhere). The markers already out stay owed; a marker issued
-- stays within the line, checked where it is projected
-- (sql/fn_chipledger_apply_projection_ops.sql, under the same constraint name).
ALTER TABLE credit_lines DROP CONSTRAINT credit_lines_within_limit;
