-- 0011: the stored answers of commands (and of refusals) compressed with lz4 instead of pglz,
-- and a command row kept whole in its table up to 4 kB instead of 2 kB.
-- A batch's reply (one result per command: a hand of 29 commands is about 7 kB) is written with
-- every append. With pglz and the default target it was compressed (about a tenth of the
-- append's statement time for a hand) and still moved to the TOAST table, a second heap row and
-- index entry per append. lz4 compresses it in a fraction of that time to within 5% of pglz's
-- size, and with a target of 4 kB the compressed reply stays in the row (docs/BENCHMARKS.md).
-- Rows under 4 kB are no longer compressed at all. Only values written from now on change:
-- rows already stored keep their form (PostgreSQL reads both), nothing is rewritten, and no
-- lock is held for long. A server built without lz4 offers only pglz for
-- default_toast_compression; there the compression stays as it was.
ALTER TABLE commands SET (toast_tuple_target = 4080);
DO $$
BEGIN
    IF 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
        ALTER TABLE commands ALTER COLUMN reply SET COMPRESSION lz4,
                             ALTER COLUMN outcome SET COMPRESSION lz4;
        ALTER TABLE rejections ALTER COLUMN reply SET COMPRESSION lz4,
                               ALTER COLUMN request SET COMPRESSION lz4;
    END IF;
END
$$;
