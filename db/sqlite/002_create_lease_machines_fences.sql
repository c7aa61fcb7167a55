-- lease_machines: fences, one row per protected resource (SQLite).
--
-- A row is the fence of one resource: the highest token any guarded write to
-- it has shown (its high-water mark). LeaseMachines::Fences::SQLite#guard
-- raises the mark and runs the guarded writes in one transaction, so the mark
-- moves if and only if those writes commit. The fence may live in a different
-- database from the lease store: the token is the only link (docs/FENCES.md).
-- LeaseMachines::Fences::SQLite#setup! reads and runs this file (it is also
-- LeaseMachines::Fences::SQLite::SCHEMA_SQL) inside one BEGIN IMMEDIATE
-- transaction, so it is safe to run again and from many processes at once.
--
-- Encoding. Tokens are unsigned 64-bit integers; an SQLite INTEGER is signed
-- (2**63 and up silently become a lossy REAL) and decimal text compares
-- '10' < '9'. highest is TEXT holding exactly 20 decimal digits, zero-padded
-- ('00000000000000000042'): strings of one length compare (BINARY collation,
-- memcmp) as the numbers they spell, so the comparison below is exact over
-- 0..18446744073709551615, and the value is readable in the sqlite3 shell.
-- The CHECK keeps any other text (which would compare wrongly) out.
--
-- lease_owner is the owner of the grant whose token set the mark (NULL: a
-- guard given a bare token, or a row written before the column existed), its
-- decimal text as the store's lease_owner (compared for equality only). An
-- equal token shown by another owner was issued twice (a failover lost an
-- acknowledged grant): refused. LeaseMachines::Fences::SQLite#setup! adds the
-- column to a table made before it (SQLite has no ADD COLUMN IF NOT EXISTS):
--
--   ALTER TABLE lease_machines_fences ADD COLUMN lease_owner TEXT CHECK (lease_owner IS NULL OR
--     (lease_owner NOT GLOB '*[^0-9]*' AND length(lease_owner) BETWEEN 1 AND 20))
--
-- The guard is one statement (the mark moves only up, and equal tokens pass
-- unless the mark and the guard name different owners):
--
--   INSERT INTO lease_machines_fences (resource, highest, lease_owner) VALUES (?1, ?2, ?3)
--   ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest,
--     lease_owner = CASE WHEN lease_machines_fences.highest = excluded.highest
--                        THEN coalesce(lease_machines_fences.lease_owner, excluded.lease_owner)
--                        ELSE excluded.lease_owner END
--   WHERE lease_machines_fences.highest IS NULL OR lease_machines_fences.highest < excluded.highest
--      OR (lease_machines_fences.highest = excluded.highest AND (lease_machines_fences.lease_owner IS NULL
--          OR excluded.lease_owner IS NULL OR lease_machines_fences.lease_owner = excluded.lease_owner))
--
-- It runs inside BEGIN IMMEDIATE (the database's write lock), so concurrent
-- guards are ordered by that lock. No row changed means the token is below the
-- mark: the write is fenced. The library never deletes a row and never lowers
-- a mark; neither should you.
CREATE TABLE IF NOT EXISTS lease_machines_fences (
  resource TEXT NOT NULL PRIMARY KEY,
  highest  TEXT CHECK (highest IS NULL OR (length(highest) = 20 AND highest NOT GLOB '*[^0-9]*'
                                           AND highest <= '18446744073709551615')),
  lease_owner TEXT CHECK (lease_owner IS NULL OR (lease_owner NOT GLOB '*[^0-9]*'
                                                  AND length(lease_owner) BETWEEN 1 AND 20))
) WITHOUT ROWID;
