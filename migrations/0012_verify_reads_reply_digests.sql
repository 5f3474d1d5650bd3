-- 0012: chipledger_commands_range answers the SHA-256 of each stored reply, not the reply
-- (sql/fn_chipledger_commands_range.sql): the verifier needs only the digest the chain entry
-- binds, and the replies were about a quarter of the bytes a verification read. A function's
-- result columns change only by dropping it; the file creates it again after the migrations.
DROP FUNCTION IF EXISTS chipledger_commands_range(text, bigint, bigint);
