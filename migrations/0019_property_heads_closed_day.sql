-- 0019: the latest gaming day a cage of the property closed, kept with its head, so that no
-- import lands on a day closed and reported (R-CHIP-5, R-CHIP-6; chipledger_append refuses such
-- a member with CL011). Taken from the closes the live log holds.
ALTER TABLE property_heads ADD COLUMN last_closed_day date;
UPDATE property_heads h
   SET last_closed_day = (SELECT max((e.payload->>'gaming_day')::date) FROM events e
                           WHERE e.property = h.property AND e.event_type = 'GamingDayClosed');
