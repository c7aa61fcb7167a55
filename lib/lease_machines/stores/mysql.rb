# frozen_string_literal: true

require "mysql2"
require "lease_machines/stores"
require "lease_machines/stores/schema"
require "lease_machines/stores/connections"

module LeaseMachines
  module Stores
    # Durable authorities in MySQL or MariaDB (InnoDB), one row per resource in the current database.
    # The connection: a Mysql2::Client in autocommit mode, a URL (owned by the store), a pool (`with`), or ActiveRecord.
    class MySQL < Store
      SCHEMA_SQL = Schema::MYSQL
      DEADLOCK_ATTEMPTS = 5

      def self.schema_sql = SCHEMA_SQL

      # @param timeout [Numeric, nil] a decision's whole time ({Deadline}); other options as {Postgres#initialize}'s
      # rubocop:disable Metrics/ParameterLists -- keywords, each one option
      def initialize(connection, before_commit: nil, signing_keys: nil, timeout: nil, tokens: :sequence, durability: nil)
        super(before_commit: before_commit, signing_keys: signing_keys, tokens: tokens, durability: durability)
        @deadline = Deadline.from(timeout)
        @connections = Connections.for(connection)
        hint = missing_table_hint { |error| error.is_a?(Mysql2::Error) && error.error_number == NO_SUCH_TABLE }
        driver = Failures::Driver.new(error: Mysql2::Error, summary: Errors.method(:summary), hint: hint)
        @failures = Failures.new("MySQL", driver: driver, server: true)
        @fast_path = FastPath.new(@connections, @failures)
      end
      # rubocop:enable Metrics/ParameterLists

      # @api private: a compare-and-set, or a locked transaction with a hook or after {FastPath::ATTEMPTS} lost races.
      def decide(name, request, label = nil)
        within(@deadline) do
          before_commit ? super : @fast_path.decide(name, request, tokens, stored_label(label)) || super
        end
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      # @api private: {BatchRenewal#decide_all} within the store's `timeout:`, failures told as {#decide}'s.
      def decide_all(batch)
        within(@deadline) { super }
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      # Within `timeout:` too: it waits for the row lock as a decision does (InnoDB's default is 50 s).
      def force_release(name) = within(@deadline) { super }

      def durability
        rows = query(DURABILITY_VARIABLES_SQL) + query(DURABILITY_STATUS_SQL)
        Durability.mysql(rows.to_h.transform_keys(&:downcase))
      end

      # Creates the table when missing, adds the label's columns to an older one (idempotent; safe to race),
      # then raises StoreError unless it is InnoDB (MyISAM has no transactions and no row locks). @return [self]
      def setup!
        engine = @connections.with do |session|
          session.query(self.class.schema_sql)
          add_label_columns(session)
          session.query(ENGINE_SQL).dig(0, 0)
        end
        schema_changed
        return self if engine.to_s.casecmp?("InnoDB")

        raise @failures.problem("the table #{TABLE} uses the #{engine.inspect} engine; the store needs InnoDB " \
                                "(transactions and row locks): ALTER TABLE #{TABLE} ENGINE = InnoDB")
      rescue Mysql2::Error => e
        raise @failures.failed(e, nil)
      end

      def close = @connections.close

      # @api private: START TRANSACTION, yield, COMMIT; a deadlock (rolled back by the server) runs it again.
      def transaction(&)
        attempts = 1
        begin
          @connections.with { |session| LockedTransaction.run(session, @failures, &) }
        rescue StoreError => e
          raise unless Errors.deadlock?(e.cause) && attempts < DEADLOCK_ATTEMPTS

          attempts += 1
          retry
        end
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      private

      # MySQL 8 has no ADD COLUMN IF NOT EXISTS: each looked for, then added (a racing setup! is fine).
      def add_label_columns(session)
        present = session.query(LABEL_COLUMNS_SQL).first.drop(1)
        ADD_LABEL_COLUMNS_SQL.zip(present) do |add, count|
          session.query(add) if count.to_s == "0"
        rescue Mysql2::Error => e
          raise unless e.error_number == DUPLICATE_COLUMN
        end
      end

      # nil: no table. A driver error is the caller's to tell (a decision's or a read's).
      def label_columns?
        columns, *labels = @connections.with { |session| session.query(LABEL_COLUMNS_SQL) }.first
                                       .map { |count| Integer(count.to_s, 10) }
        labels.all?(&:positive?) unless columns.zero?
      end

      def inspect_source = @connections.to_s

      def query(sql)
        @connections.with { |session| session.query(sql) }
      rescue Mysql2::Error => e
        raise @failures.failed(e, nil)
      end

      def labelled_for_reading?
        labelled?
      rescue Mysql2::Error => e
        raise @failures.failed(e, nil)
      end

      DUPLICATE_COLUMN = 1060 # ER_DUP_FIELDNAME
      NO_SUCH_TABLE = 1146 # ER_NO_SUCH_TABLE
      DURABILITY_VARIABLES_SQL = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit', " \
                                 "'log_bin', 'sync_binlog', 'read_only', 'rpl_semi_sync_master_enabled', " \
                                 "'rpl_semi_sync_master_wait_point', 'rpl_semi_sync_master_timeout', " \
                                 "'rpl_semi_sync_master_wait_no_slave', 'rpl_semi_sync_source_enabled', " \
                                 "'rpl_semi_sync_source_wait_point', 'rpl_semi_sync_source_timeout', " \
                                 "'rpl_semi_sync_source_wait_no_replica')"
      DURABILITY_STATUS_SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', " \
                              "'Rpl_semi_sync_source_status', 'Rpl_semi_sync_master_no_tx', " \
                              "'Rpl_semi_sync_source_no_tx')"

      def read_status(name)
        values = query(SQL.status(name, labelled_for_reading?)).first
        return nil if values.nil? || values[1].nil?

        status_from(values)
      end

      def read_statuses = statuses_from(query(SQL.statuses(labelled_for_reading?)))
      def read_statuses_of(names) = statuses_from(query(SQL.statuses_of(names, labelled_for_reading?)))

      # A row without a name is the LEFT JOIN's clock alone (no resource).
      def statuses_from(rows)
        readable_statuses(rows.reject { |values| values[1].nil? }, name_at: 1) { |values| status_from(values) }
      end

      def read_names = query(NAMES_SQL).map { |(name)| name.dup.force_encoding(Encoding::UTF_8) }

      def status_from(values)
        name = values.fetch(1).dup.force_encoding(Encoding::UTF_8)
        updated_at = Time.at(0, Integer(values.fetch(7), 10), :usec).utc
        build_status(name, values[2, 5], updated_at, Integer(values.fetch(0), 10), values.fetch(8))
      end
    end
  end
end

require_relative "mysql/statements"
require_relative "mysql/errors"
require_relative "mysql/session"
require_relative "mysql/fast_path"
require_relative "mysql/locked_transaction"
require_relative "mysql/url"
require_relative "mysql/connections"
