-- lease_machines: durable authorities, one row per resource (MySQL, MariaDB).
--
-- A row is one authority's whole checkpoint: the token high-water mark, the
-- current lease record (possibly expired) and the latest observed instant.
-- LeaseMachines::Stores::MySQL#setup! reads and runs this file (it is also
-- LeaseMachines::Stores::MySQL::SCHEMA_SQL) in the connection's current
-- database, then checks that the table is InnoDB (row locks and transactions;
-- MyISAM has neither). CREATE TABLE IF NOT EXISTS is safe to run again and
-- from many processes at once. To manage the schema yourself, run it from your
-- own migration (Rails: `execute LeaseMachines::Stores::MySQL::SCHEMA_SQL`).
--
-- Encoding. Owners, tokens and instants are unsigned 64-bit integers, stored
-- as DECIMAL(20,0), like PostgreSQL's numeric(20,0): exact over
-- 0..18446744073709551615, readable as they are and compared correctly by
-- SQL. Not BIGINT UNSIGNED: under a non-strict sql_mode a hand-written -1 or
-- 2**64 would be clamped silently to 0 or 2**64-1, which is a plausible row;
-- DECIMAL(20,0) keeps the value as written, and the library refuses it, naming
-- the resource. Instants are whole nanoseconds since the Unix epoch; the store
-- clock ticks in milliseconds (UTC_TIMESTAMP(6), the statement's start, as
-- NOW(6) is: safe under statement-based replication, unlike SYSDATE(6)).
-- updated_at is UTC.
--
-- name is VARBINARY(255): the library's names are at most 255 bytes of UTF-8,
-- compared byte for byte (no collation folds case or pads trailing spaces) and
-- ordered by bytes, as on the other engines.
--
-- No CHECK constraints, as on PostgreSQL and SQLite. The library validates
-- every row it reads in full (each value in range and canonical, a lease
-- record whole, its token issued) and refuses to decide on a row that fails,
-- with a StoreError naming the resource; the row is left as it is. It writes
-- only rows the core produced. If you edit rows by hand, keep to the same
-- rules. The library never deletes a row: releasing a lease keeps
-- last_issued, so the next grant gets a greater token.
CREATE TABLE IF NOT EXISTS lease_machines_resources (
  name                VARBINARY(255) NOT NULL,
  last_issued         DECIMAL(20,0),
  lease_owner         DECIMAL(20,0),
  lease_token         DECIMAL(20,0),
  lease_expires_at_ns DECIMAL(20,0),
  observed_ns         DECIMAL(20,0) NOT NULL DEFAULT 0,
  updated_at          DATETIME(6)   NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (name)
) ENGINE = InnoDB
