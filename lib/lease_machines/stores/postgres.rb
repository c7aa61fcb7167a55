# frozen_string_literal: true

require "pg"
require "zlib"
require "digest/sha2" # loaded now: a first wait loading it could be interrupted inside `require`
require "lease_machines/stores"
require "lease_machines/stores/schema"
require "lease_machines/stores/connections"

module LeaseMachines
  module Stores
    # Durable authorities in PostgreSQL, one row per resource. The connection: a PG::Connection, a URL
    # (owned by the store), a pool (`with`), or ActiveRecord (the base, a model, its pool, or a connection).
    class Postgres < Store
      SCHEMA_SQL = Schema::POSTGRES
      # pg_advisory_xact_lock key serializing concurrent #setup! calls ("lm_setup").
      SETUP_LOCK_KEY = 7_813_005_877_785_687_408
      SUMMARY = ->(error) { error.message.lines.first.to_s.strip }
      TEXT_ARRAY = PG::TextEncoder::Array.new(elements_type: PG::TextEncoder::String.new)
      private_constant :SUMMARY, :TEXT_ARRAY

      def self.schema_sql = SCHEMA_SQL

      # @param lock_timeout, statement_timeout [Numeric, nil] seconds a row lock wait / any one statement may take
      # @param timeout [Numeric, nil] a decision's whole time ({Deadline}); @param listen_url [String, nil] for await_handover
      # rubocop:disable Metrics/ParameterLists -- keywords, each one option
      def initialize(connection, lock_timeout: nil, statement_timeout: nil, timeout: nil, prepared_statements: true,
                     before_commit: nil, signing_keys: nil, listen_url: nil, tokens: :sequence,
                     durability: nil)
        super(before_commit: before_commit, signing_keys: signing_keys, tokens: tokens, durability: durability)
        @deadline = Deadline.from(timeout)
        raise TypeError, "listen_url must be a String or nil, got #{listen_url.inspect}" unless listen_url.nil? ||
                                                                                                listen_url.is_a?(String)
        unless [true, false].include?(prepared_statements)
          raise TypeError, "prepared_statements must be true or false, got #{prepared_statements.inspect}"
        end

        @connections = Connections.for(connection)
        @prepared = prepared_statements
        lock_timeout_ms = lock_timeout.nil? ? nil : milliseconds(lock_timeout, "lock_timeout")
        @statement_timeout_ms = statement_timeout.nil? ? nil : milliseconds(statement_timeout, "statement_timeout")
        @begin_sql = "BEGIN ISOLATION LEVEL READ COMMITTED"
        @begin_sql += "; SET LOCAL lock_timeout = #{lock_timeout_ms}" if lock_timeout_ms
        @begin_sql += "; SET LOCAL statement_timeout = #{@statement_timeout_ms}" if @statement_timeout_ms
        hint = missing_table_hint { |error| error.is_a?(PG::UndefinedTable) }
        driver = Failures::Driver.new(error: PG::Error, summary: SUMMARY, hint: hint)
        @failures = Failures.new("PostgreSQL", driver: driver, server: true)
        statements = PreparedStatements.new(@prepared, lock_timeout_ms, @statement_timeout_ms, @failures,
                                            labelled: -> { @labelled == true })
        @fast_path = FastPath.new(@connections, statements, @failures)
        @listener = Listener.new(listen_source(listen_url), @failures)
      end
      # rubocop:enable Metrics/ParameterLists

      def prepared_statements? = @prepared

      # @api private: a compare-and-set, or a locked transaction with a hook or after {FastPath::ATTEMPTS} lost races.
      def decide(name, request, label = nil)
        within(@deadline) do
          before_commit ? super : @fast_path.decide(name, request, tokens, stored_label(label)) || super
        end
      rescue PG::Error => e
        raise @failures.unavailable(e)
      end

      # @api private: {BatchRenewal#decide_all} within the store's `timeout:`, failures told as {#decide}'s.
      def decide_all(batch)
        within(@deadline) { super }
      rescue PG::Error => e
        raise @failures.unavailable(e)
      end

      def durability = Durability.postgres(DURABILITY_SETTINGS.zip(query(DURABILITY_SQL, []).values.first).to_h)

      # Creates the table when it is missing (idempotent; safe to race). @return [self]
      def setup!
        sql = self.class.schema_sql
        transaction do |tx|
          tx.connection.exec("SET LOCAL client_min_messages = warning")
          tx.connection.exec_params("SELECT pg_advisory_xact_lock($1)", [SETUP_LOCK_KEY])
          tx.connection.exec(sql)
        end
        schema_changed
        self
      end

      def close
        @listener.close
        @connections.close
      end

      def transaction(&)
        @connections.with { |session| LockedTransaction.run(session, @begin_sql, @failures, &) }
      rescue PG::Error => e
        raise @failures.unavailable(e)
      end

      private

      def inspect_source = @connections.to_s
      def handover_wait(names, seconds) = @listener.await(names, seconds)

      def listen_source(listen_url)
        return -> { PG.connect(listen_url) } if listen_url

        lambda do
          settings = @connections.with { |session| session.connection.conninfo_hash }
          PG.connect(settings.reject { |_key, value| value.nil? || value.to_s.empty? })
        end
      end

      def milliseconds(seconds, option)
        unless seconds.is_a?(Numeric) && seconds.real? && seconds.finite? && seconds.positive?
          raise ArgumentError, "#{option} must be a positive number of seconds or nil, got #{seconds.inspect}"
        end

        [(seconds * 1000).ceil, 1].max
      end

      # An operator's read, bounded by statement_timeout when set (its one parameter quoted by libpq).
      def query(sql, params) = reading { unconverted_query(sql, params) }
      def labelled_for_reading? = reading { labelled? }

      # A driver failure told as a read's.
      def reading
        yield
      rescue PG::Error, IOError => e # IOError: the driver's socket was closed under it
        raise @failures.failed(e, nil)
      end

      def unconverted_query(sql, params)
        @connections.with do |session|
          conn = session.connection
          next conn.exec_params(sql, params) unless @statement_timeout_ms

          inlined = sql.sub("$1") { params.empty? ? "$1" : conn.escape_literal(params.fetch(0)) }
          conn.exec("SET LOCAL statement_timeout = #{@statement_timeout_ms}; #{inlined}")
        end
      end

      DURABILITY_SETTINGS = %w[synchronous_commit synchronous_standby_names fsync in_recovery sync_standbys
                               timeline].freeze
      # The timeline: the current WAL file name's first 8 hex digits (pg_control_checkpoint() lags a promotion).
      DURABILITY_SQL = <<~SQL
        SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
               current_setting('fsync'), pg_is_in_recovery(),
               (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')),
               CASE WHEN pg_is_in_recovery() THEN NULL
                    ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint END
      SQL

      # nil: no table. A driver error is the caller's to tell (a decision's or a read's).
      def label_columns?
        columns, labels = unconverted_query(LABEL_COLUMNS_SQL, []).values.first.map { |count| Integer(count, 10) }
        labels == 2 unless columns.zero?
      rescue IOError => e # the driver's socket was closed under it
        raise @failures.unavailable(e)
      end

      def read_status(name)
        values = status_rows(STATUS_SQL, [name]).first
        values && status_from(values)
      end

      def read_statuses = statuses_from(status_rows(STATUSES_SQL, []))
      def read_statuses_of(names) = statuses_from(status_rows(STATUSES_OF_SQL, [TEXT_ARRAY.encode(names)]))
      def statuses_from(rows) = readable_statuses(rows, name_at: 1) { |values| status_from(values) }

      # The rows that exist (the LEFT JOIN gives one with no name when none does).
      def status_rows(sql, params)
        sql = UNLABELLED_SQL.fetch(sql) unless labelled_for_reading?
        query(sql, params).values.reject { |values| values[1].nil? }
      end

      def read_names = query(NAMES_SQL, []).column_values(0)

      def status_from(values)
        updated_at = Time.at(0, Integer(values.fetch(7), 10), :usec).utc
        build_status(values.fetch(1), values[2, 5], updated_at, Integer(values.fetch(0), 10), values.fetch(8))
      end
    end
  end
end

require_relative "postgres/statements"
require_relative "postgres/session"
require_relative "postgres/prepared_statements"
require_relative "postgres/fast_path"
require_relative "postgres/locked_transaction"
require_relative "postgres/listener"
require_relative "postgres/connections"
