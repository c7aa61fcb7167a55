# frozen_string_literal: true

require "sqlite3"
require "time"
require "lease_machines/stores"
require "lease_machines/stores/schema"
require "lease_machines/stores/fast_path"

module LeaseMachines
  module Stores
    # Durable authorities in one SQLite file shared by the processes of one host, one row per resource.
    # The file must be on a local disk: SQLite's locks do not work over network file systems.
    class SQLite < Store
      SCHEMA_SQL = Schema::SQLITE
      HOST_CLOCK = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond) }
      CLOCK_MAX_MS = U64_MAX / NANOS_PER_MILLISECOND
      # See #take_turn: how recent a release of this process's counts (s), and the longest pause.
      HANDOVER_WINDOW = 0.002
      HANDOVER_JITTER = 2 * HANDOVER_POLL
      MISSING_TABLE_HINT = lambda do |error|
        error.message.include?("no such table: #{TABLE}") ? "; create the table with store.setup!" : ""
      end
      private_constant :MISSING_TABLE_HINT

      def self.schema_sql = SCHEMA_SQL

      attr_reader :path

      # @param busy_timeout [Numeric] seconds to wait for the write lock; @param clock [#call, nil] Integer ms
      # @param readonly [Boolean] never created or changed: only {#status} and {#statuses} work
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

      # @api private: a grant is decided on the row read outside any transaction (a WAL reader takes no lock), so a
      # refusal never takes the write lock; it is written by a compare-and-set in BEGIN IMMEDIATE, read and decided
      # again when another decision changed the row first, in the locked transaction after {FastPath::ATTEMPTS}.
      def decide(name, request, label = nil)
        return released(name, super) if before_commit || !request.grant?

        label = stored_label(label)
        paused = false
        FastPath::ATTEMPTS.times do
          decision, after, columns = decided_on_read(name, request)
          return decision unless after
          # After a pause the row is read again: another process may have taken its turn.
          next if decision.granted? && !paused && (paused = take_turn(name))

          written = HolderLabel.written(request, decision, after, label)
          return decision if transaction { |tx| tx.compare_and_set(name, columns, after, written) }
        end
        super
      rescue ::SQLite3::Exception => e
        raise @failures.failed(e, Failures::NOT_WRITTEN)
      end

      # @api private: {BatchRenewal#decide_all}, a failure to open the database told as {#decide}'s.
      def decide_all(batch)
        super
      rescue ::SQLite3::Exception => e
        raise @failures.failed(e, Failures::NOT_WRITTEN)
      end

      # Handover fairness: taking back a resource this process released within HANDOVER_WINDOW first pauses,
      # while another process wants it ({Waiters}). Without it the releasing process took back nearly every lease.
      # @return [Boolean] whether it paused
      def take_turn(name)
        released, at = @last_release
        return false unless released == name && monotonic - at < HANDOVER_WINDOW && @waiters&.wanted?(name)

        sleep(rand * HANDOVER_JITTER)
        true
      end

      def released(name, decision)
        @last_release = [name, monotonic].freeze if decision.released?
        decision
      end

      # Creates the table when missing, adds the label's columns to an older one (idempotent; safe to race).
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

      def close = @mutex.synchronize { @connection.close(&:close) }

      def clock_ms
        ms = @clock.call
        return ms if ms.is_a?(Integer) && ms.between?(0, CLOCK_MAX_MS)

        raise TypeError, "clock must return Integer milliseconds since the Unix epoch in 0..#{CLOCK_MAX_MS}, " \
                         "got #{ms.inspect}"
      end

      def transaction
        @mutex.synchronize do
          connection = @connection.current
          @failures.transaction(connection) do
            connection.patiently { connection.run("BEGIN IMMEDIATE") }
            yield Transaction.new(connection, self, @failures)
          end
        end
      end

      def durability
        rows, = read("SELECT * FROM pragma_journal_mode(), pragma_synchronous()", [])
        journal_mode, synchronous = rows.fetch(0)
        Durability.sqlite("journal_mode" => journal_mode.to_s.downcase, "synchronous" => synchronous.to_s)
      end

      private

      def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      # A grant decided on the row as read now, outside any transaction: [decision, the row to write or nil, the row read].
      def decided_on_read(name, request)
        columns, clock = @mutex.synchronize do
          connection = @connection.current
          [connection.patiently { connection.run(LOCK_SQL, name) }, clock_ms]
        end
        decision, after = request.decide(name, columns, clock * NANOS_PER_MILLISECOND, tokens)
        @waiters&.want(name) if decision.reason == :occupied
        [decision, after, columns]
      end

      def handover_wait(names, seconds)
        names.each { |name| @waiters.want(name) } if @waiters
        super
      end

      def inspect_source = shown_path(@path)
      def database = @connection.current.database

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

      def label_columns?
        rows, = read(LABEL_COLUMNS_SQL, [])
        columns, *labels = rows.fetch(0)
        labels.all?(&:positive?) unless columns.zero?
      end

      def read_status(name)
        rows, clock = read(status_sql(STATUS_SQL), [name])
        rows.first && status_from(rows.first, clock)
      end

      def read_statuses = statuses_read(status_sql(STATUSES_SQL), [])

      def read_statuses_of(names)
        statuses_read(format(status_sql(STATUSES_OF_SQL), names: Array.new(names.size, "?").join(", ")), names)
      end

      def status_sql(sql) = labelled? ? sql : UNLABELLED_SQL.fetch(sql)

      def statuses_read(sql, params)
        rows, clock = read(sql, params)
        readable_statuses(rows, name_at: 0) { |values| status_from(values, clock) }
      end

      # Stepped one row at a time: sqlite3 1.x's result set costs three times as much a row.
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
