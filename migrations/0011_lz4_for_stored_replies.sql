-- 0011: the stored answers of commands and refusals are compressed with lz4 instead of pglz.
-- A batch's reply (one result per command: a hand of 29 commands is about 7 kB) and its outcome
-- are written with every append and go to TOAST compressed; pglz took about a tenth of the
-- append's statement time for a hand (docs/BENCHMARKS.md), lz4 a fraction of that for a stored
-- size within 5%. Only the compression of values written from now on changes: rows already
-- stored keep theirs (PostgreSQL reads both), nothing is rewritten, no lock is held for long.
-- A server built without lz4 offers only pglz for default_toast_compression; there nothing
-- changes.
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
