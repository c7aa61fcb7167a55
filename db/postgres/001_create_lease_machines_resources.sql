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
-- bigint is signed. They are stored as numeric(20,0) constrained to
-- 0..18446744073709551615: exact over the whole range, readable as they are
-- (a token of 2**63 reads 9223372036854775808, not a negative number) and
-- compared correctly by SQL. Instants are whole nanoseconds since the Unix
-- epoch; the store clock ticks in milliseconds (clock_timestamp()), caller
-- supplied times keep their nanoseconds, and nothing is rounded on the way
-- back. The row for a resource is never deleted by the library: releasing a
-- lease keeps last_issued, so the next grant gets a greater token.
CREATE TABLE IF NOT EXISTS lease_machines_resources (
  name                text          NOT NULL,
  last_issued         numeric(20,0),
  lease_owner         numeric(20,0),
  lease_token         numeric(20,0),
  lease_expires_at_ns numeric(20,0),
  observed_ns         numeric(20,0) NOT NULL DEFAULT 0,
  updated_at          timestamptz   NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT lease_machines_resources_pkey PRIMARY KEY (name),
  CONSTRAINT lease_machines_resources_name_size
    CHECK (octet_length(name) BETWEEN 1 AND 255),
  CONSTRAINT lease_machines_resources_last_issued_u64
    CHECK (last_issued BETWEEN 1 AND 18446744073709551615),
  CONSTRAINT lease_machines_resources_lease_owner_u64
    CHECK (lease_owner BETWEEN 0 AND 18446744073709551615),
  CONSTRAINT lease_machines_resources_lease_token_u64
    CHECK (lease_token BETWEEN 1 AND 18446744073709551615),
  CONSTRAINT lease_machines_resources_lease_expires_at_ns_u64
    CHECK (lease_expires_at_ns BETWEEN 0 AND 18446744073709551615),
  CONSTRAINT lease_machines_resources_observed_ns_u64
    CHECK (observed_ns BETWEEN 0 AND 18446744073709551615),
  -- A lease record is whole or absent.
  CONSTRAINT lease_machines_resources_lease_whole
    CHECK ((lease_owner IS NULL) = (lease_token IS NULL)
       AND (lease_token IS NULL) = (lease_expires_at_ns IS NULL)),
  -- A lease carries a token that was issued (Checkpoint.from_parts refuses the rest).
  CONSTRAINT lease_machines_resources_lease_issued
    CHECK (lease_token IS NULL OR (last_issued IS NOT NULL AND lease_token <= last_issued))
);
