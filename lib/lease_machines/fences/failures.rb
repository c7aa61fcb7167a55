# frozen_string_literal: true

require "lease_machines/stores"

module LeaseMachines
  module Fences
    # How a guard's own statements fail: the stores' sorting, told as a guard's.
    # The block's exceptions are never touched.
    class Failures < Stores::Failures
      UNKNOWN = "so the guarded writes (and the fence's mark) may or may not have been committed"
      # `to_s`: sqlite3 2.x appends the SQL to `message`.
      FIRST_LINE = ->(error) { error.to_s.lines.first.to_s.strip }
      private_constant :FIRST_LINE

      attr_reader :driver_error

      # @param hint [#call] error -> text appended to the message ("" for none)
      def initialize(label, driver_error, hint)
        @driver_error = driver_error
        super(label, driver: Driver.new(error: driver_error, summary: FIRST_LINE, hint: hint), server: true)
      end

      # A statement of the fence's own failed; `state` says what became of the guard.
      def statement(error, state = NOT_WRITTEN) = failed(error, state)

      def committing(session)
        super("COMMIT", session) do
          answer = yield
          next if answer.nil?

          raise problem("the database answered #{answer} to COMMIT (a statement inside the guarded block had " \
                        "failed): nothing was committed")
        end
      end

      private

      def refused(_what, error) = statement(error, "COMMIT was refused: nothing was committed")

      def unknown(_what, error)
        OutcomeUnknownError.new("#{label}: COMMIT failed (#{error.class}: #{summary(error)}), #{UNKNOWN}")
      end
    end
  end
end
