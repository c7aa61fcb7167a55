# frozen_string_literal: true

require "timeout"

module LeaseMachines
  module Stores
    # A server store's `timeout:`, kept by the client on a decision's whole time (statement_timeout does not
    # bound a COMMIT's wait for a sync standby): the interrupt cancels, reopens, and raises as every interrupt does.
    class Deadline
      # Raised into the deciding thread. Not a StandardError, so no `rescue` on the way swallows it and lets
      # the call go on unbounded ({Failures#committing} sorts it).
      class Exceeded < Exception; end # rubocop:disable Lint/InheritException

      def self.from(seconds)
        seconds = Runtime::Seconds.optional(:timeout, Runtime::Seconds.plain(seconds), positive: true)
        seconds && new(seconds.to_f)
      end

      attr_reader :seconds

      def initialize(seconds)
        @seconds = seconds
        freeze
      end

      def run(failures, &)
        Timeout.timeout(@seconds, Exceeded, "the store's timeout (#{@seconds} s) passed", &)
      rescue Exceeded
        raise failures.problem("the decision did not finish within the store's timeout (#{@seconds} s) and was " \
                               "interrupted before its COMMIT was sent (nothing was committed)")
      end
    end
  end
end
