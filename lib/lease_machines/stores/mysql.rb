# frozen_string_literal: true

require "mysql2"
require "lease_machines/stores"
require "lease_machines/stores/schema"
require "lease_machines/stores/connections"

module LeaseMachines
  module Stores
    # Durable authorities in MySQL or MariaDB (InnoDB): one row per resource in
    # `lease_machines_resources`, in the connection's current database.
    #
    #   store = LeaseMachines::Stores::MySQL.new("mysql2://app@127.0.0.1:3306/app")
    #   store.setup!
    #   store.authority("nightly_report").acquire(owner: 7, ttl: 30)
    #
    # The connection may be a Mysql2::Client (this store serializes its own
    # use of it with a Mutex; it must be in autocommit mode and not inside a
    # transaction), a connection URL String (the store opens and owns the
    # connection, opens it again after it failed, and opens a new one in a
    # forked child), a pool responding to `with { |mysql2_client| }`
    # (connection_pool), or ActiveRecord's mysql2 adapter: `ActiveRecord::Base`
    # (or a model class, or its connection_pool), whose pool is used through
    # `with_connection` and the adapter's `raw_connection`, or a single
    # ActiveRecord connection.
    #
    # A decision takes two round trips and one commit. The first reads the
    # resource's row and the server clock in one autocommit statement; the
    # core decides; the second writes the new checkpoint with a
    # compare-and-set: one autocommit `UPDATE ... WHERE` the row still holds
    # what was read (for a new resource, `INSERT IGNORE`). InnoDB takes the
    # row lock for that UPDATE and evaluates the condition on the newest
    # committed row, so the write lands only on the state the decision was
    # made on; when another decision got there first, nothing is written and
    # the call reads and decides again. Only after the write has committed is
    # the Decision returned. A decision that changes nothing writes nothing.
    #
    # With a `before_commit` hook a decision is one explicit transaction
    # instead: `SELECT ... FOR UPDATE` of the row, the clock, the decision,
    # `UPDATE`, the hook, `COMMIT`. A deadlock (the server rolled the
    # transaction back) runs the whole transaction again, up to
    # DEADLOCK_ATTEMPTS times; a lock wait that outlasts the session's
    # innodb_lock_wait_timeout fails with StoreError (nothing was committed).
    class MySQL < Store
      # The schema {#setup!} runs (also in the repository as
      # db/mysql/001_create_lease_machines_resources.sql); run it from your own
      # migration to manage the schema yourself.
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
      def initialize(connection, before_commit: nil, signing_keys: nil)
        super(before_commit: before_commit, signing_keys: signing_keys)
        @connections = Connections.for(connection)
        driver = Failures::Driver.new(error: Mysql2::Error, summary: Errors.method(:summary),
                                      hint: missing_table_hint)
        @failures = Failures.new("MySQL", driver: driver, server: true)
        @fast_path = FastPath.new(@connections, @failures)
      end

      # @api private: one decision. Without a before_commit hook: read, decide,
      # compare-and-set (see the class comment); with one: a locked transaction.
      def decide(name, request)
        return super if before_commit

        @fast_path.decide(name, request)
      rescue Mysql2::Error => e
        raise @failures.unavailable(e)
      end

      # Creates the table when it is missing (idempotent; safe to race), then
      # checks that it is an InnoDB table.
      # @return [self]
      # @raise [StoreError] when the table is in another engine (MyISAM has no
      #   transactions and no row locks)
      def setup!
        engine = @connections.with do |session|
          session.query(self.class.schema_sql)
          session.query(ENGINE_SQL).dig(0, 0)
        end
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

      # @api private: START TRANSACTION, yield a transaction (#lock, #write,
      # #connection), COMMIT. Errors before COMMIT roll back and raise
      # StoreError; a failure during COMMIT raises OutcomeUnknownError. A
      # deadlock runs the transaction again.
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

      def read_status(name)
        values = query(SQL.status(name)).first
        return nil if values.nil? || values[1].nil?

        status_from(values)
      end

      # A row it cannot read does not hide the others: see
      # {UnreadableStatusesError}.
      def read_statuses
        rows = query(STATUSES_SQL).reject { |values| values[1].nil? }
        readable_statuses(rows, name_at: 1) { |values| status_from(values) }
      end

      def status_from(values)
        name = values.fetch(1).dup.force_encoding(Encoding::UTF_8)
        updated_at = Time.at(0, Integer(values.fetch(7), 10), :usec).utc
        build_status(name, values[2, 5], updated_at, Integer(values.fetch(0), 10))
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
require_relative "mysql/adapter_session"
require_relative "mysql/connections"
