# frozen_string_literal: true

module LeaseMachines
  module Fences
    class SQLite < Table
      # The SQL of an SQLite fence (the table: db/sqlite/002_create_lease_machines_fences.sql).
      # Tokens are bound as their 20-digit text ({StoredToken}).
      module Statements
        # The conflict clause of every mark: the mark rises to a greater
        # token (recording its owner, or NULL), or stays at an equal one
        # (recording its owner when none was), unless both the mark and the
        # guard name an owner and they differ: a reissued token, refused.
        def self.on_conflict
          mark = "#{TABLE}.highest"
          recorded = "#{TABLE}.lease_owner"
          "ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest, " \
            "lease_owner = CASE WHEN #{mark} = excluded.highest THEN coalesce(#{recorded}, excluded.lease_owner) " \
            "ELSE excluded.lease_owner END " \
            "WHERE #{mark} IS NULL OR #{mark} < excluded.highest OR (#{mark} = excluded.highest AND " \
            "(#{recorded} IS NULL OR excluded.lease_owner IS NULL OR #{recorded} = excluded.lease_owner))"
        end

        # Raises the mark of resource ?1 to token ?2 for owner ?3, or changes
        # nothing (0 rows: fenced). Runs under the database's write lock
        # (BEGIN IMMEDIATE), which orders concurrent guards.
        MARK_SQL = "INSERT INTO #{TABLE} (resource, highest, lease_owner) VALUES (?1, ?2, ?3) #{on_conflict}".freeze
        # `a <= b` for canonical decimal texts (no leading zero): a shorter
        # text is smaller, texts of one length compare as memcmp.
        LE = lambda do |a, b|
          "(length(#{a}) < length(#{b}) OR (length(#{a}) = length(#{b}) AND #{a} <= #{b}))"
        end
        LT = lambda do |a, b|
          "(length(#{a}) < length(#{b}) OR (length(#{a}) = length(#{b}) AND #{a} < #{b}))"
        end
        private_constant :LE, :LT

        # `a <= b` and `a < b` for canonical decimal texts (SQL expressions),
        # for statements written elsewhere (fenced rows bound to the store).
        def self.at_most(left, right) = LE.call(left, right)

        def self.below(left, right) = LT.call(left, right)
        # The bound forms: ?1 resource, ?2 the token's 20-digit text, ?3 its
        # canonical text, ?4 the host clock in ns, ?5 the owner. (`WHERE` is
        # required before `ON CONFLICT` after a SELECT.)
        ISSUED = "store.name = ?1 AND #{LE.call('?3', 'store.last_issued')}".freeze
        LIVE = "#{ISSUED} AND store.lease_token = ?3 AND #{LT.call('?4', 'store.lease_expires_at_ns')} " \
               "AND (?5 IS NULL OR store.lease_owner = ?5)".freeze
        private_constant :ISSUED, :LIVE
        MARK_SQLS = {
          any: MARK_SQL,
          issued: "INSERT INTO #{TABLE} (resource, highest, lease_owner) SELECT ?1, ?2, ?5 FROM #{STORE_TABLE} AS " \
                  "store WHERE #{ISSUED} #{on_conflict}",
          live: "INSERT INTO #{TABLE} (resource, highest, lease_owner) SELECT ?1, ?2, ?5 FROM #{STORE_TABLE} AS " \
                "store WHERE #{LIVE} #{on_conflict}"
        }.freeze
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = ?".freeze
        OWNER_SQL = "SELECT lease_owner FROM #{TABLE} WHERE resource = ?".freeze
        # Whether the table has the owner column (a table made before it had none).
        HAS_OWNER_SQL = "SELECT count(*) FROM pragma_table_info('#{TABLE}') WHERE name = 'lease_owner'".freeze
        ADD_OWNER_SQL = "ALTER TABLE #{TABLE} ADD COLUMN lease_owner TEXT CHECK (lease_owner IS NULL OR " \
                        "(lease_owner NOT GLOB '*[^0-9]*' AND length(lease_owner) BETWEEN 1 AND 20))".freeze
        STORE_ROW_SQL = "SELECT last_issued, lease_token, lease_expires_at_ns, lease_owner FROM #{STORE_TABLE} " \
                        "WHERE name = ?".freeze
        SAVEPOINT = "lease_machines_fence"
        BEGIN_SQL = "BEGIN IMMEDIATE"
        # The host clock, in ns since the Unix epoch (CLOCK_REALTIME, as the
        # SQLite store's clock).
        CLOCK_NS = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond) }

        # The binds of MARK_SQLS[mode] (the owner as its decimal text, as the
        # store keeps lease_owner; nil: none).
        def self.mark_binds(mode, resource, token, owner = nil)
          owner = owner&.to_s
          case mode
          when :any then [resource, StoredToken.text(token), owner]
          when :issued then [resource, StoredToken.text(token), token.to_s, nil, owner]
          else [resource, StoredToken.text(token), token.to_s, CLOCK_NS.call.to_s, owner]
          end
        end

        # How a fence speaks SQLite through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "SQLite", adapter: /sqlite/i,
          mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), highest_sql: HIGHEST_SQL, owner_sql: OWNER_SQL,
          owner_column: [HAS_OWNER_SQL, ADD_OWNER_SQL],
          store_row_sql: STORE_ROW_SQL, clock_ns: CLOCK_NS, setup: ->(sql) { [sql] }
        ).freeze
      end
    end
  end
end
