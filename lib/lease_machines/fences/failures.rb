# frozen_string_literal: true

require "lease_machines/stores"

module LeaseMachines
  module Fences
    # How a guard's own statements fail, for one engine: the stores' sorting
    # (Stores::Failures), told as a guard's. The block's exceptions are never
    # touched: they reach the caller as they are.
    #
    # - the fence's statement (raising the mark, reading it, SAVEPOINT,
    #   RELEASE, the schema) failed: StoreError, nothing was written;
    # - COMMIT was refused (the database answered, the transaction is gone):
    #   StoreError, nothing was committed;
    # - the connection failed (or the call was interrupted) while COMMIT was
    #   in flight: OutcomeUnknownError, the guarded writes may or may not have
    #   been committed.
    #
    # The errors' `cause` is the driver's exception.
    class Failures < Stores::Failures
      UNKNOWN = "so the guarded writes (and the fence's mark) may or may not have been committed"
      # The driver's own first line: `to_s`, since sqlite3 2.x appends the SQL
      # to `message`.
      FIRST_LINE = ->(error) { error.to_s.lines.first.to_s.strip }
      private_constant :FIRST_LINE

      # @return [Class] the driver's error class (PG::Error, SQLite3::Exception)
      attr_reader :driver_error

      # @param label [String] how messages name the engine ("PostgreSQL")
      # @param hint [#call] error -> text appended to the message ("" for none)
      def initialize(label, driver_error, hint)
        @driver_error = driver_error
        super(label, driver: Driver.new(error: driver_error, summary: FIRST_LINE, hint: hint), server: true)
      end

      # A statement of the fence's own failed; `state` says what became of
      # the guard.
      def statement(error, state = NOT_WRITTEN)
        failed(error, state)
      end

      # Runs COMMIT (the block) on `session` and sorts its failures (see the
      # class comment, and Stores::Failures#committing).
      def committing(session)
        super("COMMIT", session) do
          answer = yield
          next if answer.nil?

          raise problem("the database answered #{answer} to COMMIT (a statement inside the guarded block had " \
                        "failed): nothing was committed")
        end
      end

      private

      def refused(_what, error)
        statement(error, "COMMIT was refused: nothing was committed")
      end

      def unknown(_what, error)
        OutcomeUnknownError.new("#{label}: COMMIT failed (#{error.class}: #{summary(error)}), #{UNKNOWN}")
      end
    end
  end
end
