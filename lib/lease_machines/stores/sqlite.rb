# frozen_string_literal: true

require "sqlite3"
require "time"
require "lease_machines/stores"
require "lease_machines/stores/schema"

module LeaseMachines
  module Stores
    # Durable authorities in one SQLite file, shared by many processes on one
    # host: one row per resource in `lease_machines_resources`. The file must
    # be on a local disk: SQLite's locks do not work over network file systems.
    class SQLite < Store
      # The schema {#setup!} runs (db/sqlite/001_create_lease_machines_resources.sql).
      SCHEMA_SQL = Schema::SQLITE
      # The host's wall clock in integer milliseconds since the Unix epoch.
      HOST_CLOCK = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond) }
      CLOCK_MAX_MS = U64_MAX / NANOS_PER_MILLISECOND
      # See #take_turn: how recent a release of this process's counts
      # (seconds), and the longest pause (twice a waiter's shortest poll).
      HANDOVER_WINDOW = 0.002
      HANDOVER_JITTER = 2 * HANDOVER_POLL
      MISSING_TABLE_HINT = lambda do |error|
        error.message.include?("no such table: #{TABLE}") ? "; create the table with store.setup!" : ""
      end
      private_constant :MISSING_TABLE_HINT

      # @return [String] the schema {#setup!} runs
      def self.schema_sql
        SCHEMA_SQL
      end

      # @return [String] the database file
      attr_reader :path

      # @param path [String, Pathname] the database file (created when missing)
      # @param busy_timeout [Numeric] seconds to wait for the write lock
      #   before failing with StoreError
      # @param clock [#call, nil] returns the store clock as Integer
      #   milliseconds since the Unix epoch (default: the host's CLOCK_REALTIME)
      # @param before_commit [#call, nil] called with a {Commit} inside every
      #   decision's transaction (and force release), just before COMMIT
      # @param signing_keys [Array<String>, nil] secret keys of at least 32
      #   bytes: granted and renewed leases carry their token's proof, signed
      #   with the first (docs/FENCES.md, "Signed tokens")
      # @param readonly [Boolean] open the file read-only: never created,
      #   its journal mode left as it is; only {#status} and {#statuses} work
      #   (a decision fails with StoreError, writing nothing)
      # @param tokens [Symbol] `:sequence` (default: the last token plus one)
      #   or `:clock_floor` (also at least the store clock in microseconds, so
      #   that a history restored from a backup issues above the tokens it lost;
      #   docs/STORES.md, "Durability and failover")
      # rubocop:disable Metrics/ParameterLists -- keywords, each one option
      def initialize(path, busy_timeout: 5.0, clock: nil, before_commit: nil, signing_keys: nil, readonly: false,
                     tokens: :sequence, durability: nil)
        super(before_commit: before_commit, signing_keys: signing_keys, tokens: tokens, durability: durability)
        @path = database_path(path)
        @busy_timeout_ms = busy_milliseconds(busy_timeout)
        raise TypeError, "readonly must be true or false, got #{readonly.inspect}" unless [true, false].include?(readonly)
        raise TypeError, "clock must respond to #call, got #{clock.inspect}" unless clock.nil? || clock.respond_to?(:call)

        @clock = clock || HOST_CLOCK
        @mutex = Mutex.new
        # `to_s`: sqlite3 2.x appends the SQL to `message`.
        driver = Failures::Driver.new(error: ::SQLite3::Exception, summary: ->(error) { error.to_s },
                                      hint: MISSING_TABLE_HINT,
                                      lock_wait: [::SQLite3::BusyException, "busy_timeout (#{@busy_timeout_ms} ms)"])
        @failures = Failures.new("SQLite", shown_path(@path), driver: driver, server: false)
        @connection = ProcessLocal.new { Connection.open(@path, @busy_timeout_ms, @failures, readonly: readonly) }
        @waiters = Waiters.new(@path) unless readonly
        @last_release = nil # [name, monotonic seconds]: this process's last release (#take_turn)
      end
      # rubocop:enable Metrics/ParameterLists

      # @api private: one decision. A grant is first decided on the row read
      # outside any transaction (a WAL reader takes no lock): a refusal that
      # writes nothing never takes the write lock. Anything else is decided
      # (again) in one BEGIN IMMEDIATE transaction ({Store#decide}).
      def decide(name, request, label = nil)
        return released(name, super) if before_commit || !request.grant?

        columns, clock = @mutex.synchronize do
          connection = @connection.current
          [connection.patiently { connection.run(LOCK_SQL, name) }, clock_ms]
        end
        decision, after = request.decide(name, columns, clock * NANOS_PER_MILLISECOND, tokens)
        @waiters&.want(name) if decision.reason == :occupied
        return decision unless after

        take_turn(name) if decision.granted?
        super
      rescue ::SQLite3::Exception => e
        raise @failures.failed(e, Failures::NOT_WRITTEN)
      end

      # @api private: {BatchRenewal#decide_all}, a failure to open the
      # database told as {#decide}'s.
      def decide_all(batch)
        super
      rescue ::SQLite3::Exception => e
        raise @failures.failed(e, Failures::NOT_WRITTEN)
      end

      # Handover fairness: this process taking back a resource it released
      # within the last HANDOVER_WINDOW first pauses a jittered moment, up to
      # two of a waiter's polls, so that a waiter (polling every 4-8 ms) gets
      # its turn; only while another process wants it ({Waiters}). Without
      # it the releasing process, on the CPU, took back nearly every lease.
      def take_turn(name)
        released, at = @last_release
        return unless released == name && monotonic - at < HANDOVER_WINDOW && @waiters&.wanted?(name)

        sleep(rand * HANDOVER_JITTER)
      end

      # Notes this process's last release (for {#take_turn}).
      # @return [Decision] the decision
      def released(name, decision)
        @last_release = [name, monotonic].freeze if decision.released?
        decision
      end

      # Creates the table when it is missing, and adds the holder label's
      # columns to a table made before them (idempotent; safe to race).
      # @return [self]
      def setup!
        sql = self.class.schema_sql
        transaction do |tx|
          tx.statements.patiently { tx.connection.execute_batch(sql) }
          present = tx.connection.get_first_row(LABEL_COLUMNS_SQL).drop(1)
          ADD_LABEL_COLUMNS_SQL.zip(present) { |add, count| tx.connection.execute(add) if count.zero? }
        end
        schema_changed
        self
      end

      # Closes this process's connection (the next call opens a new one).
      def close
        @mutex.synchronize { @connection.close(&:close) }
      end

      # @api private: the store clock, checked. @return [Integer] milliseconds
      def clock_ms
        ms = @clock.call
        return ms if ms.is_a?(Integer) && ms.between?(0, CLOCK_MAX_MS)

        raise TypeError, "clock must return Integer milliseconds since the Unix epoch in 0..#{CLOCK_MAX_MS}, " \
                         "got #{ms.inspect}"
      end

      # @api private: BEGIN IMMEDIATE, yield a {Transaction}, COMMIT ({Failures#transaction}).
      def transaction
        @mutex.synchronize do
          connection = @connection.current
          @failures.transaction(connection) do
            connection.patiently { connection.run("BEGIN IMMEDIATE") }
            yield Transaction.new(connection, self, @failures)
          end
        end
      end

      # What the database file promises about an acknowledged grant, read
      # from the store connection's pragmas (docs/STORES.md, "Durability and failover").
      # @return [Durability]
      def durability
        rows, = read("SELECT * FROM pragma_journal_mode(), pragma_synchronous()", [])
        journal_mode, synchronous = rows.fetch(0)
        Durability.sqlite("journal_mode" => journal_mode.to_s.downcase, "synchronous" => synchronous.to_s)
      end

      private

      def monotonic
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # A waiter says at each poll that it wants the resources ({Waiters});
      # a read-only store says nothing.
      def handover_wait(names, seconds)
        names.each { |name| @waiters.want(name) } if @waiters
        super
      end

      def inspect_source
        shown_path(@path)
      end

      # This process's SQLite3::Database (opened now when it has none).
      def database
        @connection.current.database
      end

      def database_path(path)
        path = path.to_path if path.respond_to?(:to_path)
        raise TypeError, "path must be a String or Pathname, got #{path.inspect}" unless path.is_a?(String)
        if path.empty? || path == ":memory:"
          raise ArgumentError, "path must name a database file (a store is shared through it), got #{path.inspect}"
        end

        path.dup.freeze
      end

      # The path as messages show it: its bytes escaped when they are not UTF-8.
      def shown_path(path)
        utf8 = path.dup.force_encoding(Encoding::UTF_8)
        utf8.valid_encoding? ? utf8 : path.b.inspect[1..-2]
      end

      def busy_milliseconds(seconds)
        unless seconds.is_a?(Numeric) && seconds.real? && seconds.finite? && !seconds.negative?
          raise ArgumentError, "busy_timeout must be a non-negative number of seconds, got #{seconds.inspect}"
        end

        (seconds * 1000).ceil
      end

      # A block, given the database, reads the rows itself (see #read_names).
      def read(sql, params)
        @mutex.synchronize do
          connection = @connection.current
          rows = connection.patiently do
            block_given? ? yield(connection.database) : connection.database.execute(sql, params)
          end
          [rows, clock_ms]
        end
      rescue ::SQLite3::Exception => e
        raise @failures.failed(e)
      end

      # @return [Boolean, nil] whether the table has the label's columns (nil: no table)
      def label_columns?
        rows, = read(LABEL_COLUMNS_SQL, [])
        columns, *labels = rows.fetch(0)
        labels.all?(&:positive?) unless columns.zero?
      end

      def read_status(name)
        rows, clock = read(labelled? ? STATUS_SQL : UNLABELLED_STATUS_SQL, [name])
        rows.first && status_from(rows.first, clock)
      end

      # A row it cannot read does not hide the others ({UnreadableStatusesError}).
      def read_statuses
        rows, clock = read(labelled? ? STATUSES_SQL : UNLABELLED_STATUSES_SQL, [])
        readable_statuses(rows, name_at: 0) { |values| status_from(values, clock) }
      end

      def read_statuses_of(names)
        sql = format(labelled? ? STATUSES_OF_SQL : UNLABELLED_STATUSES_OF_SQL, names: Array.new(names.size, "?").join(", "))
        rows, clock = read(sql, names)
        readable_statuses(rows, name_at: 0) { |values| status_from(values, clock) }
      end

      # Stepped through one row at a time: the driver's result set costs
      # sqlite3 1.x three times as much a row (30 ms for 10,000 names).
      def read_names
        read(NAMES_SQL, []) do |database|
          statement = database.prepare(NAMES_SQL)
          names = []
          while (row = statement.step)
            names << row.first
          end
          names
        ensure
          statement&.close
        end.first
      end

      def status_from(values, clock)
        name = values.fetch(0)
        build_status(name, values[1, 5], updated_at(name, values.fetch(6)), clock, values.fetch(7))
      end

      # The row's `updated_at` (ISO 8601 text, written by the store).
      def updated_at(name, text)
        Time.iso8601(text).utc
      rescue ArgumentError, TypeError
        shown = text.is_a?(String) && text.length > 100 ? "#{text[0, 100].inspect}..." : text.inspect
        raise @failures.problem("the row for resource #{name.inspect} has an unreadable updated_at #{shown} " \
                                "(expected ISO 8601 text such as 2026-01-31T12:00:00.000Z)")
      end
    end
  end
end

require_relative "sqlite/statements"
require_relative "sqlite/connection"
require_relative "sqlite/transaction"
require_relative "sqlite/waiters"
