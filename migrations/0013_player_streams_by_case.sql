-- 0013: player streams found by their name in any case (sql/fn_chipledger_player_in_another_case.sql):
-- a patron's id is one patron whatever its case, and a new id that differs from a known one only
-- in case is refused (R-REBUY-1: "Alice" left with $200, "alice" bought in for $40).
CREATE INDEX streams_by_lower_name ON streams (property, lower(stream));
