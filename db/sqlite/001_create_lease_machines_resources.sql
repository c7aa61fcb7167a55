-- lease_machines: durable authorities, one row per resource (SQLite).
--
-- A row is one authority's whole checkpoint: the token high-water mark, the
-- current lease record (possibly expired) and the latest observed instant.
-- LeaseMachines::Stores::SQLite#setup! reads and runs this file (it is also
-- LeaseMachines::Stores::SQLite::SCHEMA_SQL) inside one BEGIN IMMEDIATE transaction, so it is safe to run
-- again and from many processes at once.
--
-- Encoding. Owners, tokens and instants are unsigned 64-bit integers, and an
-- SQLite INTEGER is signed (a larger value silently becomes a REAL). They are
-- stored as TEXT holding the canonical decimal (no sign, no leading zero, at
-- most 18446744073709551615): exact over the whole range and readable as they
-- are in the sqlite3 shell. Instants are whole nanoseconds since the Unix
-- epoch; the store clock ticks in milliseconds (the host's CLOCK_REALTIME),
-- caller supplied times keep their nanoseconds, and nothing is rounded on the
-- way back. The row for a resource is never deleted by the library: releasing
-- a lease keeps last_issued, so the next grant gets a greater token.
--
-- No CHECK constraints, as on PostgreSQL. The range and consistency checks this
-- table had cost about a tenth of a durable decision. The library validates
-- every row it reads in full instead (each value canonical and in range, a
-- lease record whole, its token issued) and refuses to decide on a row that
-- fails, with a StoreError naming the resource; the row is left as it is. It
-- writes only rows the core produced. If you edit rows by hand, keep to the
-- same rules.
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
-- LeaseMachines::Stores::SQLite#setup! adds the two columns to a table made
-- before them (SQLite has no ADD COLUMN IF NOT EXISTS):
--
--   ALTER TABLE lease_machines_resources ADD COLUMN holder_label TEXT;
--   ALTER TABLE lease_machines_resources ADD COLUMN holder_label_token TEXT;
--
-- A table without them keeps working: its leases are unlabelled.
CREATE TABLE IF NOT EXISTS lease_machines_resources (
  name                TEXT NOT NULL PRIMARY KEY,
  last_issued         TEXT,
  lease_owner         TEXT,
  lease_token         TEXT,
  lease_expires_at_ns TEXT,
  observed_ns         TEXT NOT NULL DEFAULT '0',
  updated_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  holder_label        TEXT,
  holder_label_token  TEXT
) WITHOUT ROWID;
