-- 0020: chipledger_last_closed_day goes: an import on a closed gaming day is refused under the
-- head lock, by chipledger_append for its events and by chipledger_record_refusal for its
-- refusal (CL011), so the service no longer reads the day beforehand.
DROP FUNCTION IF EXISTS chipledger_last_closed_day(text);
