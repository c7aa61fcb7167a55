-- lease_machines: fences, one row per protected resource (PostgreSQL).
--
-- A row is the fence of one resource: the highest token any guarded write to
-- it has shown (its high-water mark). LeaseMachines::Fences::Postgres#guard
-- raises the mark and runs the guarded writes in one transaction, so the mark
-- moves if and only if those writes commit. The fence may live in a different
-- database from the lease store: the token is the only link (docs/FENCES.md).
-- LeaseMachines::Fences::Postgres#setup! reads and runs this file (it is also
-- LeaseMachines::Fences::Postgres::SCHEMA_SQL) inside one transaction that
-- holds an advisory lock, so it is safe to run again and from many processes at
-- once. To manage the schema yourself, run it from your own migration (Rails:
-- `execute LeaseMachines::Fences::Postgres::SCHEMA_SQL`).
--
-- Encoding. Tokens are unsigned 64-bit integers, and bigint is signed.
-- highest is numeric(20,0): exact over 0..18446744073709551615, compared
-- correctly by SQL, readable as it is. The CHECK keeps a hand-written value
-- from turning the comparison around (a negative mark would let every token
-- through); it is checked only when the mark is written.
--
-- lease_owner is the owner of the grant whose token set the mark (NULL: a
-- guard given a bare token, or a row written before the column existed),
-- numeric(20,0) as the store's lease_owner. An equal token shown by another
-- owner was issued twice (a failover lost an acknowledged grant): refused.
--
-- The guard is one statement (the mark moves only up, and equal tokens pass
-- unless the mark and the guard name different owners):
--
--   INSERT INTO lease_machines_fences AS fence (resource, highest, lease_owner) VALUES ($1, $2, $3)
--   ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest,
--     lease_owner = CASE WHEN fence.highest = excluded.highest
--                        THEN coalesce(fence.lease_owner, excluded.lease_owner) ELSE excluded.lease_owner END
--   WHERE fence.highest IS NULL OR fence.highest < excluded.highest
--      OR (fence.highest = excluded.highest AND (fence.lease_owner IS NULL OR excluded.lease_owner IS NULL
--                                              OR fence.lease_owner = excluded.lease_owner))
--
-- It locks the resource's row whether or not it updates it, so concurrent
-- guards of one resource are ordered by the row lock, and each compares with
-- the mark the previous one committed. No row changed means the token is
-- below the mark: the write is fenced. The guard sends it behind a CTE that
-- first takes the same lock (SELECT ... FOR NO KEY UPDATE) on a row that
-- already holds the token with the guard's owner (or when it names none):
-- such a guard changes nothing, so it writes no new row version. The library
-- never deletes a row and never lowers a mark; neither should you.
CREATE TABLE IF NOT EXISTS lease_machines_fences (
  resource   text          NOT NULL,
  highest    numeric(20,0),
  lease_owner numeric(20,0),
  CONSTRAINT lease_machines_fences_pkey PRIMARY KEY (resource),
  CONSTRAINT lease_machines_fences_highest_is_a_token
    CHECK (highest BETWEEN 0 AND 18446744073709551615),
  CONSTRAINT lease_machines_fences_lease_owner_is_an_owner
    CHECK (lease_owner BETWEEN 0 AND 18446744073709551615)
);
-- A table made before lease_owner existed gets it here (its rows keep their
-- marks, with no owner recorded).
ALTER TABLE lease_machines_fences ADD COLUMN IF NOT EXISTS lease_owner numeric(20,0)
  CONSTRAINT lease_machines_fences_lease_owner_is_an_owner CHECK (lease_owner BETWEEN 0 AND 18446744073709551615);
