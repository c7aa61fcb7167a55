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
-- increments it, so the guard's UPDATE always changes the row it admits, and
-- its row count means the same whether or not the client counts matched rows
-- (CLIENT_FOUND_ROWS, which mysql2 and ActiveRecord set) or changed ones:
--
--   UPDATE lease_machines_fences SET admitted = admitted + 1, highest = <token>
--    WHERE resource = <resource> AND (highest IS NULL OR highest <= <token>)
--
-- (then, when no row changed, INSERT IGNORE of the resource's first row, and
-- the UPDATE once more if another guard created it meanwhile). The UPDATE
-- takes the resource's row lock whether or not it changes the row, and reads
-- the newest committed mark (InnoDB's current read, under every isolation
-- level), so concurrent guards of one resource are ordered by the lock. No row
-- changed means the token is below the mark: the write is fenced. The library
-- never deletes a row and never lowers a mark; neither should you.
CREATE TABLE IF NOT EXISTS lease_machines_fences (
  resource VARBINARY(255)  NOT NULL,
  highest  DECIMAL(20,0),
  admitted BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (resource),
  CONSTRAINT lease_machines_fences_highest_is_a_token CHECK (highest BETWEEN 0 AND 18446744073709551615)
) ENGINE = InnoDB
