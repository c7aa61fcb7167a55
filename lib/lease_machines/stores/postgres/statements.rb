# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      CLOCK_MS = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
      # Read back as text, so decoding never depends on a type map the owner installed.
      COLUMNS_AS_TEXT = "r.last_issued::text, r.lease_owner::text, r.lease_token::text, " \
                        "r.lease_expires_at_ns::text, r.observed_ns::text"
      COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"

      # The clock is read after the lock (a FOR UPDATE subquery is never flattened).
      LOCK_SQL = "SELECT #{COLUMNS_AS_TEXT}, #{CLOCK_MS}::text " \
                 "FROM (SELECT #{COLUMNS} FROM #{TABLE} WHERE name = $1 FOR UPDATE) AS r".freeze
      # A batch's locking read: the rows of $1 (text[]) locked in name order, the clock after the locks.
      LOCK_ALL_SQL = "SELECT r.name::text, #{COLUMNS_AS_TEXT}, #{CLOCK_MS}::text " \
                     "FROM (SELECT name, #{COLUMNS} FROM #{TABLE} WHERE name = ANY($1::text[]) " \
                     "ORDER BY name COLLATE \"C\" FOR UPDATE) AS r".freeze
      # A batch's write: the names in $1, their five columns in $2 to $6 (numeric[]).
      WRITE_ALL_SQL = "UPDATE #{TABLE} AS t SET last_issued = v.last_issued, lease_owner = v.lease_owner, " \
                      "lease_token = v.lease_token, lease_expires_at_ns = v.lease_expires_at_ns, " \
                      "observed_ns = v.observed_ns, updated_at = clock_timestamp() " \
                      "FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::numeric[], $5::numeric[], " \
                      "$6::numeric[]) AS v(name, #{COLUMNS}) WHERE t.name = v.name".freeze
      INSERT_SQL = "INSERT INTO #{TABLE} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING".freeze
      SET_COLUMNS = "last_issued = $2, lease_owner = $3, lease_token = $4, lease_expires_at_ns = $5, " \
                    "observed_ns = $6, updated_at = clock_timestamp()"
      UPDATE_SQL = "UPDATE #{TABLE} SET #{SET_COLUMNS} WHERE name = $1".freeze
      UPDATE_LABELLED_SQL = "UPDATE #{TABLE} SET #{SET_COLUMNS}, #{HolderLabel::COLUMN} = $7, " \
                            "#{HolderLabel::TOKEN_COLUMN} = $4 WHERE name = $1".freeze

      READ_SQL = "SELECT #{COLUMNS}, #{CLOCK_MS} FROM #{TABLE} WHERE name = $1".freeze
      # No row yet: the clock alone, in the same shape (a LEFT JOIN would cost every read more).
      CLOCK_SQL = "SELECT NULL, NULL, NULL, NULL, NULL, #{CLOCK_MS}".freeze
      SAME_SQL = "(#{COLUMNS}) IS NOT DISTINCT FROM ($7::numeric, $8::numeric, $9::numeric, $10::numeric, " \
                 "$11::numeric)".freeze
      CAS_SQL = "#{UPDATE_SQL} AND #{SAME_SQL}".freeze
      CAS_LABELLED_SQL = "UPDATE #{TABLE} SET #{SET_COLUMNS}, #{HolderLabel::COLUMN} = $12, " \
                         "#{HolderLabel::TOKEN_COLUMN} = $4 WHERE name = $1 AND #{SAME_SQL}".freeze
      # Skips a row another decision's write holds. Answers (written, same): f,t skipped; f,f changed, and
      # then nothing was locked either (a row lock's transaction id would make its commit wait for a flush).
      CAS_UNLESS_LOCKED = lambda do |cas|
        "WITH target AS (SELECT name FROM #{TABLE} WHERE name = $1 AND #{SAME_SQL} FOR UPDATE SKIP LOCKED), " \
        "written AS (#{cas} AND name IN (SELECT name FROM target) RETURNING name) " \
        "SELECT EXISTS (SELECT 1 FROM written), " \
        "EXISTS (SELECT 1 FROM #{TABLE} WHERE name = $1 AND #{SAME_SQL})".freeze
      end
      CAS_UNLESS_LOCKED_SQL = CAS_UNLESS_LOCKED.call(CAS_SQL)
      CAS_UNLESS_LOCKED_LABELLED_SQL = CAS_UNLESS_LOCKED.call(CAS_LABELLED_SQL)
      CREATE_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) " \
                   "ON CONFLICT (name) DO NOTHING".freeze
      CREATE_LABELLED_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}, #{HolderLabel::COLUMN}, " \
                            "#{HolderLabel::TOKEN_COLUMN}) VALUES ($1, $2, $3, $4, $5, $6, $7, $4) " \
                            "ON CONFLICT (name) DO NOTHING".freeze

      # The channel of resource $1 (as {Listener.channel}); the payload is the name.
      CHANNEL_SQL = "'lease_machines_' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 40)"
      NOTIFY_SQL = "SELECT pg_notify(#{CHANNEL_SQL}, $1)".freeze
      # NOTIFY only when written (delivered on commit).
      CAS_NOTIFY_SQL = "WITH written AS (#{CAS_SQL} RETURNING name) " \
                       "SELECT pg_notify(#{CHANNEL_SQL}, $1) FROM written".freeze
      CAS_NOTIFY_LABELLED_SQL = "WITH written AS (#{CAS_LABELLED_SQL} RETURNING name) " \
                                "SELECT pg_notify(#{CHANNEL_SQL}, $1) FROM written".freeze
      # Each fast-path write's variant that writes the label too, as its last parameter.
      LABELLED_OF = { CAS_SQL => CAS_LABELLED_SQL, CAS_UNLESS_LOCKED_SQL => CAS_UNLESS_LOCKED_LABELLED_SQL,
                      CREATE_SQL => CREATE_LABELLED_SQL, CAS_NOTIFY_SQL => CAS_NOTIFY_LABELLED_SQL }.compare_by_identity.freeze
      # Statements whose last parameter is the label (text; the others after the name are decimals).
      LABELLED_SQL = LABELLED_OF.values.to_h { |sql| [sql, true] }.compare_by_identity.freeze

      STATUS_COLUMNS = "#{CLOCK_MS}::text, r.name::text, #{COLUMNS_AS_TEXT}, " \
                       "(extract(epoch FROM r.updated_at) * 1000000)::bigint::text, " \
                       "#{HolderLabel.shown_sql('r.')}".freeze
      STATUS_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON r.name = $1".freeze
      STATUSES_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON true " \
                     "ORDER BY r.name COLLATE \"C\"".freeze
      STATUSES_OF_SQL = STATUSES_SQL.sub("ON true", "ON r.name = ANY($1::text[])").freeze
      NAMES_SQL = "SELECT name FROM #{TABLE} ORDER BY name COLLATE \"C\"".freeze
      UNLABELLED_SQL = HolderLabel.unlabelled([STATUS_SQL, STATUSES_SQL, STATUSES_OF_SQL], "r.")
      # The table's column count (through the search_path), and how many are the label's.
      LABEL_COLUMNS_SQL = "SELECT count(*)::text, (count(*) FILTER (WHERE attname IN ('#{HolderLabel::COLUMN}', " \
                          "'#{HolderLabel::TOKEN_COLUMN}')))::text FROM pg_attribute " \
                          "WHERE attrelid = to_regclass('#{TABLE}') AND attnum > 0 AND NOT attisdropped".freeze
    end
  end
end
