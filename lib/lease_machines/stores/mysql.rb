# frozen_string_literal: true

require "mysql2"
require "lease_machines/stores"
require "lease_machines/stores/schema"
require "lease_machines/stores/connections"

module LeaseMachines
  module Stores
    # Durable authorities in MySQL or MariaDB (InnoDB): one row per resource in
    # `lease_machines_resources`, in the connection's current database.
    # The connection: a Mysql2::Client in autocommit mode, a URL (owned by the
    # store), a pool (`with`), or ActiveRecord's mysql2 adapter (the base, a
    # model, its pool, or a connection).
    class MySQL < Store
      # The schema {#setup!} runs (db/mysql/001_create_lease_machines_resources.sql).
      SCHEMA_SQL = Schema::MYSQL
      # How many times a transaction a deadlock rolled back runs again.
      DEADLOCK_ATTEMPTS = 5

      # @return [String] the schema {#setup!} runs
      def self.schema_sql
        SCHEMA_SQL
      end

      # @param connection [Mysql2::Client, String, #with, ActiveRecord] see the class comment
      # @param before_commit [#call, nil] called with a {Commit} inside every
      #   decision's transaction (and force release), just before COMMIT (a
      #   test hook, or a place to write to the same database in the same
      #   transaction); its connection is the Mysql2::Client
      # @param signing_keys [Array<String>, nil] secret keys of at least 32
      #   bytes: granted and renewed leases carry their token's proof, signed
      #   with the first (docs/FENCES.md, "Signed tokens")
      # @param timeout [Numeric, nil] seconds one decision may take in all,
      #   kept by the client ({Deadline}): past it the call is interrupted
      #   and raises StoreError (nothing committed) or, once COMMIT (or the
      #   fast path's write) was sent, OutcomeUnknownError. nil (the default): none
      # @param tokens [Symbol] `:sequence` (default: the last token plus one)
      #   or `:clock_floor` (also at least the server clock in microseconds, so
      #   that a failover to an asynchronous replica that lost the last grants
      #   still issues above them; docs/STORES.md, "Durability and failover")
      # rubocop:disable Metrics/ParameterLists -- keywords, each one option
      def initialize(connection, before_commit: nil, signing_keys: nil, timeout: nil, tokens: :sequence, durability: nil)
        super(before_commit: before_commit, signing_keys: signing_keys, tokens: tokens, durability: durability)
        @deadline = Deadline.from(timeout)
        @connections = Connections.for(connection)
        driver = Failures::Driver.new(error: Mysql2::Error, summary: Errors.method(:summary),
                                      hint: missing_table_hint)
        @failures = Failures.new("MySQL", driver: driver, server: true)
        @fast_path = FastPath.new(@connections, @failures)
      end
      # rubocop:enable Metrics/ParameterLists

      # @api private: one decision: compare-and-set, or a locked transaction
      # with a before_commit hook or after the compare-and-set lost
      # {FastPath::ATTEMPTS} races in a row.
      def decide(name, request, label = nil)
        within(@deadline) do
          before_commit ? super : @fast_path.decide(name, request, tokens, stored_label(label)) || super
        end
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      # @api private: {BatchRenewal#decide_all} within the store's `timeout:`
      # (the whole batch's), its connection failures told as {#decide}'s.
      def decide_all(batch)
        within(@deadline) { super }
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      # Within `timeout:` too: an operator's release waits for the row lock
      # as a decision does (InnoDB's lock wait is 50 s by default).
      def force_release(name)
        within(@deadline) { super }
      end

      # What the server promises about an acknowledged grant, read from its
      # global variables and status now (docs/STORES.md, "Durability and failover").
      # @return [Durability]
      def durability
        rows = query(DURABILITY_VARIABLES_SQL) + query(DURABILITY_STATUS_SQL)
        Durability.mysql(rows.to_h.transform_keys(&:downcase))
      end

      # Creates the table when it is missing, adds the holder label's column
      # to a table made before it (idempotent; safe to race), then checks
      # that it is an InnoDB table.
      # @return [self]
      # @raise [StoreError] when the table is in another engine (MyISAM has no
      #   transactions and no row locks)
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

      # Closes a connection this store opened from a URL (other connections
      # belong to the caller and are left open).
      def close
        @connections.close
      end

      # @api private: START TRANSACTION, yield a transaction, COMMIT. A
      # deadlock (the server rolled it back) runs it again.
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

      # MySQL 8 has no ADD COLUMN IF NOT EXISTS: each looked for, then added
      # (a concurrent setup! that added it first is fine).
      def add_label_columns(session)
        present = session.query(LABEL_COLUMNS_SQL).first.drop(1)
        ADD_LABEL_COLUMNS_SQL.zip(present) do |add, count|
          session.query(add) if count.to_s == "0"
        rescue Mysql2::Error => e
          raise unless e.error_number == DUPLICATE_COLUMN
        end
      end

      # @return [Boolean, nil] whether the table has the label's columns (nil:
      #   no table). A driver error is the caller's to tell (a decision's or a read's).
      def label_columns?
        columns, *labels = @connections.with { |session| session.query(LABEL_COLUMNS_SQL) }.first
                                       .map { |count| Integer(count.to_s, 10) }
        labels.all?(&:positive?) unless columns.zero?
      end

      def inspect_source
        @connections.to_s
      end

      def missing_table_hint
        store_class = self.class
        lambda do |error|
          return "" unless error.is_a?(Mysql2::Error) && error.error_number == 1146 # ER_NO_SUCH_TABLE

          "; create the table with store.setup! (or run #{store_class}::SCHEMA_SQL in a migration)"
        end
      end

      # An operator's read. @return [Array<Array<String, nil>>]
      def query(sql)
        @connections.with { |session| session.query(sql) }
      rescue Mysql2::Error => e
        raise @failures.failed(e, nil)
      end

      # {#labelled?}, asking failing as a read does.
      def labelled_for_reading?
        labelled?
      rescue Mysql2::Error => e
        raise @failures.failed(e, nil)
      end

      DUPLICATE_COLUMN = 1060 # ER_DUP_FIELDNAME
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

      # A row it cannot read does not hide the others ({UnreadableStatusesError}).
      def read_statuses
        rows = query(SQL.statuses(labelled_for_reading?)).reject { |values| values[1].nil? }
        readable_statuses(rows, name_at: 1) { |values| status_from(values) }
      end

      def read_statuses_of(names)
        rows = query(SQL.statuses_of(names, labelled_for_reading?)).reject { |values| values[1].nil? }
        readable_statuses(rows, name_at: 1) { |values| status_from(values) }
      end

      def read_names
        query(NAMES_SQL).map { |(name)| name.dup.force_encoding(Encoding::UTF_8) }
      end

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
require_relative "mysql/kill_query"
require_relative "mysql/fast_path"
require_relative "mysql/locked_transaction"
require_relative "mysql/url"
require_relative "mysql/adapter_session"
require_relative "mysql/connections"
