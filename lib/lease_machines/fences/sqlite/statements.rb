# frozen_string_literal: true

module LeaseMachines
  module Fences
    class SQLite < Table
      # The SQL of an SQLite fence (the table: db/sqlite/002_create_lease_machines_fences.sql).
      # Tokens are bound as their 20-digit text ({StoredToken}).
      module Statements
        # Raises the mark of resource ?1 to token ?2, or changes nothing
        # (0 rows: fenced). Runs under the database's write lock (BEGIN
        # IMMEDIATE), which orders concurrent guards.
        MARK_SQL = <<~SQL.gsub(/\s+/, " ").strip
          INSERT INTO #{TABLE} (resource, highest) VALUES (?, ?)
          ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
          WHERE #{TABLE}.highest IS NULL OR #{TABLE}.highest <= excluded.highest
        SQL
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
        # canonical text, ?4 the host clock in ns. (`WHERE` is required before
        # `ON CONFLICT` after a SELECT.)
        ISSUED = "store.name = ?1 AND #{LE.call('?3', 'store.last_issued')}".freeze
        LIVE = "#{ISSUED} AND store.lease_token = ?3 AND #{LT.call('?4', 'store.lease_expires_at_ns')}".freeze
        private_constant :ISSUED, :LIVE
        MARK_SQLS = {
          any: MARK_SQL,
          issued: <<~SQL.gsub(/\s+/, " ").strip,
            INSERT INTO #{TABLE} (resource, highest)
            SELECT ?1, ?2 FROM #{STORE_TABLE} AS store WHERE #{ISSUED}
            ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
            WHERE #{TABLE}.highest IS NULL OR #{TABLE}.highest <= excluded.highest
          SQL
          live: <<~SQL.gsub(/\s+/, " ").strip
            INSERT INTO #{TABLE} (resource, highest)
            SELECT ?1, ?2 FROM #{STORE_TABLE} AS store WHERE #{LIVE}
            ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
            WHERE #{TABLE}.highest IS NULL OR #{TABLE}.highest <= excluded.highest
          SQL
        }.freeze
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = ?".freeze
        STORE_ROW_SQL = "SELECT last_issued, lease_token, lease_expires_at_ns FROM #{STORE_TABLE} WHERE name = ?".freeze
        SAVEPOINT = "lease_machines_fence"
        BEGIN_SQL = "BEGIN IMMEDIATE"
        # The host clock, in ns since the Unix epoch (CLOCK_REALTIME, as the
        # SQLite store's clock).
        CLOCK_NS = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond) }

        # The binds of MARK_SQLS[mode].
        def self.mark_binds(mode, resource, token)
          case mode
          when :any then [resource, StoredToken.text(token)]
          when :issued then [resource, StoredToken.text(token), token.to_s]
          else [resource, StoredToken.text(token), token.to_s, CLOCK_NS.call.to_s]
          end
        end

        # How a fence speaks SQLite through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "SQLite", adapter: /sqlite/i,
          mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), highest_sql: HIGHEST_SQL,
          store_row_sql: STORE_ROW_SQL, clock_ns: CLOCK_NS, setup: ->(sql) { [sql] }
        ).freeze
      end
    end
  end
end
