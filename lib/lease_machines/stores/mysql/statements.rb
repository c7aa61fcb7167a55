# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The SQL the MySQL store sends, values inlined: the name as a hex
    # literal (exact bytes whatever the character set, nothing to escape),
    # the columns as the core's decimal digits ({.decimal}).
    class MySQL < Store
      # The store clock in ms, from UTC_TIMESTAMP(6): replicates under
      # statement-based replication (unlike SYSDATE), and no time zone or DST
      # is involved (unlike UNIX_TIMESTAMP(NOW(6))).
      CLOCK_MS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000"
      COLUMNS = %w[last_issued lease_owner lease_token lease_expires_at_ns observed_ns].freeze
      COLUMN_LIST = COLUMNS.join(", ")
      R_COLUMNS = COLUMNS.map { |column| "r.#{column}" }.join(", ")
      NOW = "UTC_TIMESTAMP(6)"

      # The fast path's read: the row, the clock, and @@autocommit; a new
      # resource's clock is NEW_READ_SQL (a LEFT JOIN costs MariaDB a
      # temporary table on every call).
      READ_SQL = "SELECT #{COLUMN_LIST}, #{CLOCK_MS}, @@autocommit FROM #{TABLE} WHERE name = %<name>s".freeze
      NEW_READ_SQL = "SELECT #{COLUMNS.map { 'NULL' }.join(', ')}, #{CLOCK_MS}, @@autocommit".freeze

      # The locked transaction's locking read (the clock is read by the next
      # statement, so after the lock is granted).
      LOCK_SQL = "SELECT #{COLUMN_LIST} FROM #{TABLE} WHERE name = %<name>s FOR UPDATE".freeze
      CLOCK_SQL = "SELECT #{CLOCK_MS}".freeze
      INSERT_EMPTY_SQL = "INSERT IGNORE INTO #{TABLE} (name, updated_at) VALUES (%<name>s, #{NOW})".freeze

      STATUS_COLUMNS = "#{CLOCK_MS}, r.name, #{R_COLUMNS}, " \
                       "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', r.updated_at)".freeze
      STATUS_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON r.name = %<name>s".freeze
      STATUSES_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON TRUE " \
                     "ORDER BY r.name".freeze
      ENGINE_SQL = "SELECT ENGINE FROM information_schema.TABLES " \
                   "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '#{TABLE}'".freeze

      # Builds the statements from a name and decimal Strings.
      module SQL
        DECIMAL = /\A(?:0|[1-9][0-9]{0,19})\z/
        private_constant :DECIMAL

        class << self
          # A resource name as a hex literal.
          def name(name)
            "X'#{name.unpack1('H*')}'"
          end

          # A column value the core wrote: its digits, or NULL.
          def decimal(value)
            return "NULL" if value.nil?
            return value if value.is_a?(String) && value.match?(DECIMAL)

            raise Failures.internal("a column value is not a decimal: #{value.inspect}")
          end

          def read(name)
            format(READ_SQL, name: name(name))
          end

          def lock(name)
            format(LOCK_SQL, name: name(name))
          end

          def insert_empty(name)
            format(INSERT_EMPTY_SQL, name: name(name))
          end

          def status(name)
            format(STATUS_SQL, name: name(name))
          end

          # The row's new columns, by name.
          def update(name, after)
            sets = COLUMNS.zip(after).map { |column, value| "#{column} = #{decimal(value)}" }.join(", ")
            "UPDATE #{TABLE} SET #{sets}, updated_at = #{NOW} WHERE name = #{name(name)}"
          end

          # Writes only when the row still holds `before` (`<=>`: NULL-safe).
          # UPDATE reads the newest committed row (InnoDB's current read).
          def compare_and_set(name, before, after)
            same = COLUMNS.zip(before).map { |column, value| "#{column} <=> #{decimal(value)}" }.join(" AND ")
            "#{update(name, after)} AND #{same}"
          end

          # A new resource's first row; ignored (0 rows) when another decision
          # created it first.
          def create(name, after)
            values = after.map { |value| decimal(value) }.join(", ")
            "INSERT IGNORE INTO #{TABLE} (name, #{COLUMN_LIST}, updated_at) VALUES (#{name(name)}, #{values}, #{NOW})"
          end
        end
      end
      private_constant :SQL
    end
  end
end
