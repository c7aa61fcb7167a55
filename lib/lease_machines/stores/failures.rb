# frozen_string_literal: true

module LeaseMachines
  module Stores
    # How a store call fails, for every engine: nothing committed (StoreError), outcome unknown
    # (OutcomeUnknownError), or unavailable. Raise the returned error inside the driver's `rescue` (its `cause`).
    class Failures
      UNKNOWN = "so the decision may or may not have been committed; it was not returned"
      # What became of a call that failed before anything committed ({#failed}).
      ROLLED_BACK = "rolled back: nothing was committed"
      NOT_WRITTEN = "nothing was written"
      NOT_COMMITTED = "nothing was committed"
      IN_TRANSACTION = "inside a transaction: a durable decision commits its own transaction before it returns"

      class << self
        def closed(connection) = StoreError.new("the #{connection} connection is closed (finished)")
        def in_transaction(connection, advice) = StoreError.new("the #{connection} connection is #{IN_TRANSACTION}#{advice}")
        def reconnect_failed(who, error) = StoreError.new("#{who} could not reconnect: #{error.message}")

        # A store's own invariant failed (a bug, never the database).
        def internal(detail) = StoreError.new("internal error: #{detail}")
      end

      # `summary` and `hint` are callables or nil, `lock_wait` is [error class, limit] or nil.
      Driver = Struct.new(:error, :summary, :hint, :lock_wait, keyword_init: true)

      # @return [String] the engine and, when messages name it, its database: "SQLite (/var/lib/app/l.sqlite3)"
      attr_reader :label

      def initialize(engine, database = nil, driver:, server:)
        @engine = engine
        @label = database ? "#{engine} (#{database})" : engine
        @driver = driver
        @server = server
        freeze
      end

      def summary(error) = @driver.summary ? @driver.summary.call(error) : error.message

      # A driver error ended the call before anything committed; `state` nil for a read.
      def failed(error, state = ROLLED_BACK)
        detail = summary(error)
        error_class, limit = @driver.lock_wait
        if error_class && error.is_a?(error_class)
          detail = "the database stayed locked for #{limit}: #{detail}"
          state = NOT_COMMITTED
        end
        StoreError.new("#{@label}: #{detail}#{" (#{state})" if state}#{hint(error)}")
      end

      def problem(detail) = StoreError.new("#{@label}: #{detail}")

      def row_count(verb, name, count)
        StoreError.new("#{@engine}: #{verb} the row for resource #{name.inspect} changed #{count} rows")
      end

      # The block begins the transaction and does its work; then COMMIT. Cleanup is an `ensure` with a
      # flag: Thread#kill and Ruby 3.1's Timeout.timeout (a throw) skip every `rescue`.
      def transaction(connection)
        settled = false
        begin
          value = yield
          settled = true
        rescue @driver.error => e
          raise failed(e) # rolled back by the `ensure`
        ensure
          connection.roll_back unless settled
        end
        answer = committing("COMMIT", connection) { connection.commit }
        return value unless answer

        raise StoreError, "#{@label} answered #{answer} to COMMIT (a statement in the transaction had failed): " \
                          "nothing was committed"
      end

      # Runs the committing statement: refused is StoreError; anything else (an interrupt too) is outcome
      # unknown after a recover, and so is success with a WARNING (PostgreSQL's cancelled wait for a sync standby).
      def committing(what, connection, &)
        settled = false
        begin
          value, warnings = watching(connection, &)
          settled = true
        rescue StoreError
          settled = true
          raise
        rescue StandardError, Deadline::Exceeded => e
          raise unknown(what, e) unless connection.refused?(e) # recovered by the `ensure`

          settled = true
          connection.roll_back
          raise refused(what, e)
        ensure
          connection.recover unless settled
        end
        raise warned(what, warnings) unless warnings.empty?

        value
      end

      def unavailable(error)
        return StoreError.new("#{@label} connection unavailable: #{summary(error)}") if @server

        StoreError.new("#{@label}: cannot open the database: #{error.message}")
      end

      private

      # The block's value and the warnings the server sent while it ran (none where it cannot tell).
      def watching(connection, &)
        return [yield, []] unless connection.respond_to?(:warnings_while)

        connection.warnings_while(&)
      end

      def warned(what, warnings)
        OutcomeUnknownError.new("#{@label}: the server warned during #{what}: #{warnings.first}, " \
                                "#{self.class::UNKNOWN}")
      end

      def hint(error) = @driver.hint ? @driver.hint.call(error) : ""

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
    end
  end
end
