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
-- most 18446744073709551615), checked below: exact over the whole range and
-- readable as they are in the sqlite3 shell. Instants are whole nanoseconds
-- since the Unix epoch; the store clock ticks in milliseconds (the host's
-- CLOCK_REALTIME), caller supplied times keep their nanoseconds, and nothing is
-- rounded on the way back. The row for a resource is never deleted by the
-- library: releasing a lease keeps last_issued, so the next grant gets a
-- greater token.
CREATE TABLE IF NOT EXISTS lease_machines_resources (
  name                TEXT NOT NULL PRIMARY KEY
    CONSTRAINT lease_machines_resources_name_size
    CHECK (typeof(name) = 'text' AND length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  last_issued         TEXT
    CONSTRAINT lease_machines_resources_last_issued_u64
    CHECK (last_issued IS NULL OR (typeof(last_issued) = 'text'
      AND last_issued GLOB '[1-9]*' AND last_issued NOT GLOB '*[^0-9]*'
      AND (length(last_issued) < 20 OR (length(last_issued) = 20 AND last_issued <= '18446744073709551615')))),
  lease_owner         TEXT
    CONSTRAINT lease_machines_resources_lease_owner_u64
    CHECK (lease_owner IS NULL OR (typeof(lease_owner) = 'text'
      AND (lease_owner = '0' OR lease_owner GLOB '[1-9]*') AND lease_owner NOT GLOB '*[^0-9]*'
      AND (length(lease_owner) < 20 OR (length(lease_owner) = 20 AND lease_owner <= '18446744073709551615')))),
  lease_token         TEXT
    CONSTRAINT lease_machines_resources_lease_token_u64
    CHECK (lease_token IS NULL OR (typeof(lease_token) = 'text'
      AND lease_token GLOB '[1-9]*' AND lease_token NOT GLOB '*[^0-9]*'
      AND (length(lease_token) < 20 OR (length(lease_token) = 20 AND lease_token <= '18446744073709551615')))),
  lease_expires_at_ns TEXT
    CONSTRAINT lease_machines_resources_lease_expires_at_ns_u64
    CHECK (lease_expires_at_ns IS NULL OR (typeof(lease_expires_at_ns) = 'text'
      AND (lease_expires_at_ns = '0' OR lease_expires_at_ns GLOB '[1-9]*') AND lease_expires_at_ns NOT GLOB '*[^0-9]*'
      AND (length(lease_expires_at_ns) < 20
        OR (length(lease_expires_at_ns) = 20 AND lease_expires_at_ns <= '18446744073709551615')))),
  observed_ns         TEXT NOT NULL DEFAULT '0'
    CONSTRAINT lease_machines_resources_observed_ns_u64
    CHECK (typeof(observed_ns) = 'text'
      AND (observed_ns = '0' OR observed_ns GLOB '[1-9]*') AND observed_ns NOT GLOB '*[^0-9]*'
      AND (length(observed_ns) < 20 OR (length(observed_ns) = 20 AND observed_ns <= '18446744073709551615'))),
  updated_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- A lease record is whole or absent.
  CONSTRAINT lease_machines_resources_lease_whole
    CHECK ((lease_owner IS NULL) = (lease_token IS NULL)
       AND (lease_token IS NULL) = (lease_expires_at_ns IS NULL)),
  -- A lease carries a token that was issued (Checkpoint.from_parts refuses the
  -- rest). Canonical decimals compare as numbers by (length, text).
  CONSTRAINT lease_machines_resources_lease_issued
    CHECK (lease_token IS NULL OR (last_issued IS NOT NULL
      AND (length(lease_token) < length(last_issued)
        OR (length(lease_token) = length(last_issued) AND lease_token <= last_issued))))
) WITHOUT ROWID;
