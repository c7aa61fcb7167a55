-- lease_machines: durable authorities, one row per resource (PostgreSQL).
--
-- A row is one authority's whole checkpoint: the token high-water mark, the
-- current lease record (possibly expired) and the latest observed instant.
-- LeaseMachines::Stores::Postgres#setup! reads and runs this file (it is also
-- LeaseMachines::Stores::Postgres::SCHEMA_SQL) inside one transaction that holds an advisory lock, so it
-- is safe to run again and from many processes at once. To manage the schema
-- yourself, run it from your own migration (Rails:
-- `execute LeaseMachines::Stores::Postgres::SCHEMA_SQL`).
--
-- Encoding. Owners, tokens and instants are unsigned 64-bit integers, and
-- bigint is signed. They are stored as numeric(20,0): exact over the whole
-- range 0..18446744073709551615, readable as they are (a token of 2**63 reads
-- 9223372036854775808, not a negative number) and compared correctly by SQL.
-- Instants are whole nanoseconds since the Unix epoch; the store clock ticks in
-- milliseconds (clock_timestamp()), caller supplied times keep their
-- nanoseconds, and nothing is rounded on the way back. The row for a resource
-- is never deleted by the library: releasing a lease keeps last_issued, so the
-- next grant gets a greater token.
--
-- No CHECK constraints. PostgreSQL prepares a table's CHECK expressions again
-- for every UPDATE, and the range and consistency checks this table had cost
-- about a third of a durable decision. The library validates every row it reads
-- in full instead (each value in range and canonical, a lease record whole, its
-- token issued) and refuses to decide on a row that fails, with a StoreError
-- naming the resource; the row is left as it is. It writes only rows the core
-- produced. If you edit rows by hand, keep to the same rules.
--
-- holder_label is the holder's own words for itself (host, pid, job class and
-- id: at most 200 bytes of UTF-8), for operators only: the library decides on
-- the other columns alone. It is written in the transaction of the grant it
-- labels, with that grant's token in holder_label_token, kept by renewals,
-- and cleared (NULL) by a release; another owner's grant writes its own. A
-- status shows it only while holder_label_token is lease_token: a grant by a
-- process that does not write it (a version before labels) leaves the last
-- holder's words in the row, never shown as the new holder's.
--
-- The ALTER TABLE at the end adds the two columns to a table made before
-- them. A table without them keeps working: its leases are unlabelled.
CREATE TABLE IF NOT EXISTS lease_machines_resources (
  name                text          NOT NULL,
  last_issued         numeric(20,0),
  lease_owner         numeric(20,0),
  lease_token         numeric(20,0),
  lease_expires_at_ns numeric(20,0),
  observed_ns         numeric(20,0) NOT NULL DEFAULT 0,
  updated_at          timestamptz   NOT NULL DEFAULT clock_timestamp(),
  holder_label        text,
  holder_label_token  numeric(20,0),
  CONSTRAINT lease_machines_resources_pkey PRIMARY KEY (name)
);
-- A table made before the holder label existed gets its columns here (its rows keep their
-- leases, unlabelled until their next grant).
ALTER TABLE lease_machines_resources ADD COLUMN IF NOT EXISTS holder_label text,
  ADD COLUMN IF NOT EXISTS holder_label_token numeric(20,0);
