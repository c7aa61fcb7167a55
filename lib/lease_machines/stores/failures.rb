# frozen_string_literal: true

module LeaseMachines
  module Stores
    # How a store call fails, for every engine: nothing committed
    # (StoreError), outcome unknown (OutcomeUnknownError), or unavailable
    # (StoreError about the connection). The methods return the error: raise
    # it inside the driver error's `rescue`, so that becomes its `cause`.
    # {#transaction} and {#committing} need a connection answering
    # `refused?(error)`, `roll_back`, `recover` and `commit` (nil when it
    # committed, else the database's answer).
    class Failures
      # How every OutcomeUnknownError says so.
      UNKNOWN = "so the decision may or may not have been committed; it was not returned"
      # What became of a call that failed before anything committed ({#failed}).
      ROLLED_BACK = "rolled back: nothing was committed"
      NOT_WRITTEN = "nothing was written"
      NOT_COMMITTED = "nothing was committed"
      # Why a store refuses a connection that is inside a transaction.
      IN_TRANSACTION = "inside a transaction: a durable decision commits its own transaction before it returns"

      class << self
        def closed(connection)
          StoreError.new("the #{connection} connection is closed (finished)")
        end

        def in_transaction(connection, advice)
          StoreError.new("the #{connection} connection is #{IN_TRANSACTION}#{advice}")
        end

        def reconnect_failed(who, error)
          StoreError.new("#{who} could not reconnect: #{error.message}")
        end

        # A store's own invariant failed (a bug, never the database).
        def internal(detail)
          StoreError.new("internal error: #{detail}")
        end
      end

      # How one driver's errors read: `summary` and `hint` are callables or
      # nil, `lock_wait` is [error class, limit] or nil.
      Driver = Struct.new(:error, :summary, :hint, :lock_wait, keyword_init: true)

      # @return [String] how messages name the engine and, when they do, its
      #   database: "PostgreSQL", "SQLite (/var/lib/app/leases.sqlite3)"
      attr_reader :label

      # @param engine [String] the engine's name ("PostgreSQL", "SQLite")
      # @param database [String, nil] the database, when messages name it
      # @param driver [Driver] how the engine's driver errors read
      # @param server [Boolean] whether the engine is a server behind a connection
      def initialize(engine, database = nil, driver:, server:)
        @engine = engine
        @label = database ? "#{engine} (#{database})" : engine
        @driver = driver
        @server = server
        freeze
      end

      # @return [String] a driver error as messages quote it
      def summary(error)
        summary = @driver.summary
        summary ? summary.call(error) : error.message
      end

      # A driver error ended the call before anything committed. `state` says
      # what became of the call (nil for a read, which had nothing to commit).
      def failed(error, state = ROLLED_BACK)
        detail = summary(error)
        error_class, limit = @driver.lock_wait
        if error_class && error.is_a?(error_class)
          detail = "the database stayed locked for #{limit}: #{detail}"
          state = NOT_COMMITTED
        end
        StoreError.new("#{@label}: #{detail}#{" (#{state})" if state}#{hint(error)}")
      end

      # The store found what it does not go on with (`detail` says what).
      def problem(detail)
        StoreError.new("#{@label}: #{detail}")
      end

      # Writing one resource's row changed `count` rows instead of one.
      def row_count(verb, name, count)
        StoreError.new("#{@engine}: #{verb} the row for resource #{name.inspect} changed #{count} rows")
      end

      # The block begins the transaction and does its work; then COMMIT. A
      # driver error before COMMIT rolls back and raises StoreError.
      # The cleanup is an `ensure` with a flag, not a `rescue`: Thread#kill
      # and Ruby 3.1's Timeout.timeout (which unwinds by throw) skip every
      # `rescue`, and only `ensure` runs.
      # @return the block's value
      def transaction(connection)
        settled = false
        begin
          value = yield
          settled = true
        rescue @driver.error => e
          settled = true
          connection.roll_back
          raise failed(e)
        ensure
          connection.roll_back unless settled
        end
        answer = committing("COMMIT", connection) { connection.commit }
        raise rolled_back_at_commit(answer) if answer

        value
      end

      # Runs the statement that commits (the block) and sorts its failures:
      # refused, nothing committed (StoreError); anything else, outcome
      # unknown after the connection is recovered; an interrupt (a store's
      # {Deadline} among them) the same. A statement that succeeded while the server warned is outcome
      # unknown too: PostgreSQL answers a COMMIT whose wait for a synchronous
      # standby was cancelled with success and a WARNING (committed here,
      # perhaps not on the standby a failover promotes). The severity is what
      # counts, not the text: that WARNING has no SQLSTATE of its own.
      # @return the block's value
      def committing(what, connection, &)
        settled = false
        begin
          value, warnings = watching(connection, &)
          settled = true
        rescue StoreError
          settled = true
          raise
        rescue StandardError => e
          settled = true
          if connection.refused?(e)
            connection.roll_back
            raise refused(what, e)
          end

          connection.recover
          raise unknown(what, e)
        rescue Deadline::Exceeded => e
          settled = true
          connection.recover
          raise unknown(what, e)
        ensure
          connection.recover unless settled
        end
        raise warned(what, warnings) unless warnings.empty?

        value
      end

      # The connection could not be opened (or reopened).
      def unavailable(error)
        return StoreError.new("#{@label} connection unavailable: #{summary(error)}") if @server

        StoreError.new("#{@label}: cannot open the database: #{error.message}")
      end

      private

      # @return [Array(Object, Array<String>)] the block's value and the
      #   warnings the server sent while it ran (none where the session
      #   cannot tell)
      def watching(connection, &)
        return [yield, []] unless connection.respond_to?(:warnings_while)

        connection.warnings_while(&)
      end

      def warned(what, warnings)
        OutcomeUnknownError.new("#{@label}: the server warned during #{what}: #{warnings.first}, " \
                                "#{self.class::UNKNOWN}")
      end

      def hint(error)
        hint = @driver.hint
        hint ? hint.call(error) : ""
      end

      def refused(what, error)
        return StoreError.new("#{@label} refused #{what}, nothing was committed: #{summary(error)}#{hint(error)}") if @server

        StoreError.new("#{@label}: #{what} failed and the transaction was rolled back, nothing was committed: " \
                       "#{summary(error)}")
      end

      def unknown(what, error)
        if @server && error.is_a?(@driver.error)
          return OutcomeUnknownError.new("#{@label}: the connection failed during #{what}, #{UNKNOWN}: #{summary(error)}")
        end

        happened = @server ? "was interrupted" : "failed"
        OutcomeUnknownError.new("#{@label}: #{what} #{happened} (#{error.class}: #{error.message}), #{UNKNOWN}")
      end

      def rolled_back_at_commit(answer)
        StoreError.new("#{@label} answered #{answer} to COMMIT (a statement in the transaction had failed): " \
                       "nothing was committed")
      end
    end
  end
end
