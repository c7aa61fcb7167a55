# frozen_string_literal: true

module LeaseMachines
  module Stores
    # How a store call fails, for every engine. Each failure is one of three
    # outcomes, and both its class and its message say which:
    #
    # - nothing was committed: StoreError. The resource's state is what it
    #   was: the database refused, a lock wait ran out, the connection was lost
    #   before anything that commits was sent, or the store found a row it
    #   will not write on.
    # - the outcome is unknown: OutcomeUnknownError. The statement that
    #   commits (COMMIT, or PostgreSQL's compare-and-set write) was in flight
    #   when the connection failed or the call was interrupted.
    # - the engine is unavailable: StoreError about the connection, which
    #   could not be opened, reopened or used as it is. Nothing was sent.
    #
    # Each store makes one for its engine. The methods return the error; raise
    # it inside the `rescue` of the driver's error, so that error becomes its
    # `cause`. {#transaction} and {#committing} sort the failures of a
    # transaction themselves, on a connection object that answers:
    #
    # - `refused?(error)`: whether the database refused the statement that
    #   commits with `error`, so that nothing was committed (the connection is
    #   usable once #roll_back has run);
    # - `roll_back`: leaves no transaction open (quietly);
    # - `recover`: makes the connection usable again after a failure whose
    #   outcome is unknown, or an interrupt (quietly);
    # - `commit`: sends COMMIT; nil when it committed, else the database's
    #   answer (PostgreSQL answers ROLLBACK when a statement had failed).
    class Failures
      # How every OutcomeUnknownError says so.
      UNKNOWN = "so the decision may or may not have been committed; it was not returned"
      # What became of a call that failed before anything committed ({#failed}).
      ROLLED_BACK = "rolled back: nothing was committed"
      NOT_WRITTEN = "nothing was written"
      NOT_COMMITTED = "nothing was committed"
      # Why a store refuses a connection that is inside a transaction.
      IN_TRANSACTION = "inside a transaction: a durable decision commits its own transaction before it returns"

      # About a connection the caller gave the store, which it cannot use (the
      # engine is unavailable), and about the store itself.
      class << self
        # A connection given to the store cannot be used: it is closed.
        def closed(connection)
          StoreError.new("the #{connection} connection is closed (finished)")
        end

        # A connection given to the store is inside a transaction; `advice`
        # ends the sentence.
        def in_transaction(connection, advice)
          StoreError.new("the #{connection} connection is #{IN_TRANSACTION}#{advice}")
        end

        # `who` could not reconnect a broken connection.
        def reconnect_failed(who, error)
          StoreError.new("#{who} could not reconnect: #{error.message}")
        end

        # A store's own invariant failed (a bug, never the database).
        def internal(detail)
          StoreError.new("internal error: #{detail}")
        end
      end

      # How one driver's errors read: its error class (`error`), how a message
      # quotes one (`summary`; nil: its message), what to do about one,
      # appended to the message (`hint`; nil: nothing), and which of its errors
      # is a lock wait that ran out, with the limit it ran out of
      # (`lock_wait`: [error class, limit], or nil).
      Driver = Struct.new(:error, :summary, :hint, :lock_wait, keyword_init: true)

      # @return [String] how messages name the engine and, when they do, its
      #   database: "PostgreSQL", "SQLite (/var/lib/app/leases.sqlite3)"
      attr_reader :label

      # @param engine [String] the engine's name ("PostgreSQL", "SQLite")
      # @param database [String, nil] the database, when messages name it
      # @param driver [Driver] how the engine's driver errors read
      # @param server [Boolean] whether the engine is a server behind a
      #   connection: its failures are told as the server's answer or the
      #   connection's loss (a file engine's as the statement's)
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

      # --- nothing was committed ---------------------------------------------

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

      # --- a transaction -------------------------------------------------------

      # Runs one transaction on `connection`: the block begins it and does its
      # work; then COMMIT. Any failure before COMMIT rolls back: a driver error
      # raises StoreError (nothing was committed), anything else (a hook's own
      # exception, an interrupt) reaches the caller as it is. COMMIT's
      # failures are sorted by {#committing}.
      #
      # The cleanup is an `ensure` with a flag, not a `rescue`: Thread#kill
      # and Ruby 3.1's Timeout.timeout (which unwinds by throw) skip every
      # `rescue`, and only `ensure` runs. After any unwinding the connection
      # is rolled back (or recovered, when a query was in flight), so nothing
      # stays open or locked; the interrupted call's outcome is unknown to
      # its caller, who gets whatever interrupted it.
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

      # Runs the statement that commits a decision (the block: COMMIT, or a
      # write that commits on its own) and sorts its failures: a StoreError
      # from the block as it is (raised before anything was sent); refused by
      # the database, nothing was committed (StoreError); anything else, the
      # outcome is unknown (OutcomeUnknownError, after the connection is
      # recovered); an interrupt (anything that unwinds past `rescue`:
      # another exception, throw, Thread#kill) after the same, from `ensure`.
      # @return the block's value
      def committing(what, connection)
        settled = false
        begin
          value = yield
          settled = true
          value
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
        ensure
          connection.recover unless settled
        end
      end

      # --- the engine is unavailable -------------------------------------------

      # The connection could not be opened (or reopened).
      def unavailable(error)
        return StoreError.new("#{@label} connection unavailable: #{summary(error)}") if @server

        StoreError.new("#{@label}: cannot open the database: #{error.message}")
      end

      private

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
