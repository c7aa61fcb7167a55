# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The MySQL store's SQL, values inlined: the name as a hex literal (exact bytes, nothing to escape),
    # the columns as the core's decimal digits.
    class MySQL < Store
      # UTC_TIMESTAMP(6): replicates under statement-based replication (unlike SYSDATE), no time zone or DST.
      CLOCK_MS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000"
      COLUMNS = %w[last_issued lease_owner lease_token lease_expires_at_ns observed_ns].freeze
      COLUMN_LIST = COLUMNS.join(", ")
      R_COLUMNS = COLUMNS.map { |column| "r.#{column}" }.join(", ")
      NOW = "UTC_TIMESTAMP(6)"

      # The row, the clock and @@autocommit; a new resource's clock is NEW_READ_SQL (a LEFT JOIN costs MariaDB
      # a temporary table on every call).
      READ_SQL = "SELECT #{COLUMN_LIST}, #{CLOCK_MS}, @@autocommit FROM #{TABLE} WHERE name = %<name>s".freeze
      NEW_READ_SQL = "SELECT #{COLUMNS.map { 'NULL' }.join(', ')}, #{CLOCK_MS}, @@autocommit".freeze

      # The clock is read by the next statement, so after the lock is granted.
      LOCK_SQL = "SELECT #{COLUMN_LIST} FROM #{TABLE} WHERE name = %<name>s FOR UPDATE".freeze
      CLOCK_SQL = "SELECT #{CLOCK_MS}".freeze
      # A batch's locking read, in the order of the primary key.
      LOCK_ALL_SQL = "SELECT name, #{COLUMN_LIST} FROM #{TABLE} WHERE name IN (%<names>s) ORDER BY name FOR UPDATE"
                     .freeze
      # A batch's write: the locked rows joined by name to a derived table of their five columns (a CASE per column
      # would make the server scan all its WHENs for each row).
      WRITE_ALL_SQL = "UPDATE #{TABLE} AS r JOIN (%<rows>s) AS v ON r.name = v.name SET " \
                      "#{COLUMNS.map { |column| "r.#{column} = v.#{column}" }.join(', ')}, r.updated_at = #{NOW}".freeze
      INSERT_EMPTY_SQL = "INSERT IGNORE INTO #{TABLE} (name, updated_at) VALUES (%<name>s, #{NOW})".freeze

      STATUS_COLUMNS = "#{CLOCK_MS}, r.name, #{R_COLUMNS}, " \
                       "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', r.updated_at), %<label>s".freeze
      STATUS_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON r.name = %<name>s".freeze
      STATUSES_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON TRUE " \
                     "ORDER BY r.name".freeze
      STATUSES_OF_SQL = STATUSES_SQL.sub("ON TRUE", "ON r.name IN (%<names>s)").freeze
      NAMES_SQL = "SELECT name FROM #{TABLE} ORDER BY name".freeze
      LABEL_COLUMNS_SQL = "SELECT COUNT(*), COALESCE(SUM(COLUMN_NAME = '#{HolderLabel::COLUMN}'), 0), " \
                          "COALESCE(SUM(COLUMN_NAME = '#{HolderLabel::TOKEN_COLUMN}'), 0) " \
                          "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() " \
                          "AND TABLE_NAME = '#{TABLE}'".freeze
      ADD_LABEL_COLUMNS_SQL = ["ALTER TABLE #{TABLE} ADD COLUMN #{HolderLabel::COLUMN} VARBINARY(200) NULL".freeze,
                               "ALTER TABLE #{TABLE} ADD COLUMN #{HolderLabel::TOKEN_COLUMN} DECIMAL(20,0) NULL"
                                 .freeze].freeze
      ENGINE_SQL = "SELECT ENGINE FROM information_schema.TABLES " \
                   "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '#{TABLE}'".freeze

      # Builds the statements from a name and decimal Strings.
      module SQL
        DECIMAL = /\A(?:0|[1-9][0-9]{0,19})\z/
        private_constant :DECIMAL

        class << self
          def name(name) = "X'#{name.unpack1('H*')}'"

          def decimal(value)
            return "NULL" if value.nil?
            return value if value.is_a?(String) && value.match?(DECIMAL)

            raise Failures.internal("a column value is not a decimal: #{value.inspect}")
          end

          def read(name) = format(READ_SQL, name: name(name))
          def lock(name) = format(LOCK_SQL, name: name(name))
          def lock_all(names) = format(LOCK_ALL_SQL, names: names.map { |each| name(each) }.join(", "))
          def insert_empty(name) = format(INSERT_EMPTY_SQL, name: name(name))
          def status(name, labelled) = format(STATUS_SQL, name: name(name), label: status_label(labelled))
          def statuses(labelled) = format(STATUSES_SQL, label: status_label(labelled))

          def statuses_of(names, labelled)
            format(STATUSES_OF_SQL, names: names.map { |one| name(one) }.join(", "), label: status_label(labelled))
          end

          def label(label) = label.nil? ? "NULL" : "X'#{label.unpack1('H*')}'"

          def update(name, after, label)
            sets = COLUMNS.zip(after).map { |column, value| "#{column} = #{decimal(value)}" }.join(", ")
            unless label == HolderLabel::KEEP
              sets += ", #{HolderLabel::COLUMN} = #{label(label)}, #{HolderLabel::TOKEN_COLUMN} = #{decimal(after[2])}"
            end
            "UPDATE #{TABLE} SET #{sets}, updated_at = #{NOW} WHERE name = #{name(name)}"
          end

          # One statement writing the five columns of `rows` ([name, columns] pairs, each name once).
          def update_all(rows)
            selects = rows.each_with_index.map do |(name, after), index|
              values = [name(name), *after.map { |value| decimal(value) }]
              values = values.zip(["name", *COLUMNS]).map { |value, column| "#{value} AS #{column}" } if index.zero?
              "SELECT #{values.join(', ')}"
            end
            format(WRITE_ALL_SQL, rows: selects.join(" UNION ALL "))
          end

          # Writes only when the row still holds `before` (`<=>`: NULL-safe); UPDATE reads the newest committed row.
          def compare_and_set(name, before, after, label)
            same = COLUMNS.zip(before).map { |column, value| "#{column} <=> #{decimal(value)}" }.join(" AND ")
            "#{update(name, after, label)} AND #{same}"
          end

          # Ignored (0 rows) when another decision created the row first.
          def create(name, after, label)
            values = after.map { |value| decimal(value) }.join(", ")
            columns = COLUMN_LIST
            unless label == HolderLabel::KEEP
              columns = "#{columns}, #{HolderLabel::COLUMN}, #{HolderLabel::TOKEN_COLUMN}"
              values = "#{values}, #{label(label)}, #{decimal(after[2])}"
            end
            "INSERT IGNORE INTO #{TABLE} (name, #{columns}, updated_at) VALUES (#{name(name)}, #{values}, #{NOW})"
          end

          private

          def status_label(labelled) = labelled ? HolderLabel.shown_sql("r.") : "NULL"
        end
      end
      private_constant :SQL
    end
  end
end
