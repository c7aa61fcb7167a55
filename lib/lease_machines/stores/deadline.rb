# frozen_string_literal: true

require "timeout"

module LeaseMachines
  module Stores
    # A server store's `timeout:`: a bound, kept by the client, on one
    # decision's whole time (connecting, the read, lock waits, the write,
    # COMMIT and a wait for a synchronous standby). A server's own timeouts
    # cannot give it: PostgreSQL's statement_timeout does not bound a
    # COMMIT's wait for a synchronous standby at all. When it passes, the
    # call is interrupted where it is, and the interrupt takes the path every
    # interrupt takes: the statement in flight is cancelled (PostgreSQL) and
    # the connection reopened; before COMMIT (or the fast path's write) was
    # sent the call raises StoreError, nothing committed; once it was sent,
    # OutcomeUnknownError.
    class Deadline
      # Raised into the deciding thread when the deadline passes; the
      # StoreError or OutcomeUnknownError the call raises has it as `cause`.
      # Not a StandardError, so that no `rescue` on the way swallows it and
      # lets the call go on unbounded ({Failures#committing} sorts it).
      class Exceeded < Exception; end # rubocop:disable Lint/InheritException

      # @return [Deadline, nil] nil when `seconds` is nil (no bound)
      # @raise [TypeError, ArgumentError] unless a finite, positive Integer
      #   or Float (or ActiveSupport::Duration), as every span of seconds
      #   ({Runtime::Seconds})
      def self.from(seconds)
        return nil if seconds.nil?

        new(Runtime::Seconds.check(:timeout, Runtime::Seconds.plain(seconds), positive: true).to_f)
      end

      # @return [Float]
      attr_reader :seconds

      def initialize(seconds)
        @seconds = seconds
        freeze
      end

      # Runs the decision within the bound.
      # @param failures [Failures] the store's, which names the engine
      def run(failures, &)
        Timeout.timeout(@seconds, Exceeded, "the store's timeout (#{@seconds} s) passed", &)
      rescue Exceeded
        raise failures.problem("the decision did not finish within the store's timeout (#{@seconds} s) and was " \
                               "interrupted before its COMMIT was sent (nothing was committed)")
      end
    end
  end
end
