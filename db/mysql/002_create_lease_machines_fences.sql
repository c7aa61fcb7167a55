-- lease_machines: fences, one row per protected resource (MySQL, MariaDB).
--
-- A row is the fence of one resource: the highest token any guarded write to
-- it has shown (its high-water mark). LeaseMachines::Fences::MySQL#guard
-- raises the mark and runs the guarded writes in one InnoDB transaction, so
-- the mark moves if and only if those writes commit. The fence may live in a
-- different database from the lease store: the token is the only link
-- (docs/FENCES.md). LeaseMachines::Fences::MySQL#setup! reads and runs this
-- file (it is also LeaseMachines::Fences::MySQL::SCHEMA_SQL) and checks that
-- the table is InnoDB. It is DDL, which commits any open transaction in MySQL,
-- so setup! refuses to run inside one.
--
-- Encoding. highest is DECIMAL(20,0): exact over 0..18446744073709551615,
-- compared correctly by SQL, readable as it is. The CHECK (enforced by MariaDB
-- 10.2 and MySQL 8.0.16 and later) keeps a hand-written value from turning the
-- comparison around. resource is VARBINARY(255), compared byte for byte.
--
-- admitted counts the guards that passed (and committed). Every admitted guard
-- of an existing row increments it, so the guard's statement changes the row
-- it admits (2 rows) and leaves a refused one as it was (0 rows, or 1 when the
-- client counts matched rows, CLIENT_FOUND_ROWS, which mysql2 and ActiveRecord
-- set; an inserted row counts 1 too, and a second statement tells them apart):
--
--   INSERT INTO lease_machines_fences (resource, highest, admitted) VALUES (<resource>, <token>, 0)
--   ON DUPLICATE KEY UPDATE admitted = IF(<mark admits token>, admitted + 1, admitted),
--                           highest = IF(<mark admits token>, <token>, highest)
--
-- lease_owner is the owner of the grant whose token set the mark (NULL: a
-- guard given a bare token, or a row written before the column existed),
-- DECIMAL(20,0) as the store's lease_owner. An equal token shown by another
-- owner was issued twice (a failover lost an acknowledged grant): <mark admits
-- token> is then false. LeaseMachines::Fences::MySQL#setup! adds the column to
-- a table made before it (MySQL 8 has no ADD COLUMN IF NOT EXISTS):
--
--   ALTER TABLE lease_machines_fences ADD COLUMN lease_owner DECIMAL(20,0) NULL,
--     ADD CONSTRAINT lease_machines_fences_lease_owner_is_an_owner CHECK (lease_owner BETWEEN 0 AND 18446744073709551615)
--
-- The statement takes the resource's row lock (inserting the row, or finding
-- it) and reads the newest committed mark (InnoDB's current read, under every
-- isolation level), so concurrent guards of one resource are ordered by the
-- lock, the first write of a new resource too (docs/FENCES.md says why the row
-- is not looked for with an UPDATE first). The library never deletes a row and
-- never lowers a mark; neither should you.
CREATE TABLE IF NOT EXISTS lease_machines_fences (
  resource VARBINARY(255)  NOT NULL,
  highest  DECIMAL(20,0),
  admitted BIGINT UNSIGNED NOT NULL DEFAULT 0,
  lease_owner DECIMAL(20,0),
  PRIMARY KEY (resource),
  CONSTRAINT lease_machines_fences_highest_is_a_token CHECK (highest BETWEEN 0 AND 18446744073709551615),
  CONSTRAINT lease_machines_fences_lease_owner_is_an_owner CHECK (lease_owner BETWEEN 0 AND 18446744073709551615)
) ENGINE = InnoDB
