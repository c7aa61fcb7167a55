# frozen_string_literal: true

require_relative "../errors"

module LeaseMachines
  module Fences
    # How a guard's own statements fail, for one engine. The block's
    # exceptions are never touched: they reach the caller as they are.
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
    class Failures
      UNKNOWN = "so the guarded writes (and the fence's mark) may or may not have been committed"

      # @return [Class] the driver's error class (PG::Error, SQLite3::Exception)
      attr_reader :driver_error

      # @param label [String] how messages name the engine ("PostgreSQL")
      # @param hint [#call] error -> text appended to the message ("" for none)
      def initialize(label, driver_error, hint)
        @label = label
        @driver_error = driver_error
        @hint = hint
        freeze
      end

      # A statement of the fence's own failed; `state` says what became of
      # the guard.
      def statement(error, state = "nothing was written")
        StoreError.new("#{@label}: #{summary(error)} (#{state})#{@hint.call(error)}")
      end

      # The fence cannot go on with the connection as it is.
      def problem(detail)
        StoreError.new("#{@label}: #{detail}")
      end

      # Runs COMMIT (the block) on `session` and sorts its failures (see the
      # class comment). `session.refused?(error)` tells a refused COMMIT.
      def committing(session)
        answer = yield
        return if answer.nil?

        raise problem("the database answered #{answer} to COMMIT (a statement inside the guarded block had " \
                      "failed): nothing was committed")
      rescue StoreError
        raise
      rescue StandardError => e
        if session.refused?(e)
          session.roll_back
          raise statement(e, "COMMIT was refused: nothing was committed")
        end

        session.recover
        raise OutcomeUnknownError, "#{@label}: COMMIT failed (#{e.class}: #{summary(e)}), #{UNKNOWN}"
      rescue Exception # rubocop:disable Lint/RescueException -- an interrupt: leave the connection usable, re-raise
        session.recover
        raise
      end

      private

      # The driver's own first line: `to_s`, since sqlite3 2.x appends the
      # SQL to `message`.
      def summary(error)
        error.to_s.lines.first.to_s.strip
      end
    end
  end
end
