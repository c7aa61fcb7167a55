# frozen_string_literal: true

require_relative "../errors"

module LeaseMachines
  # A held lease can no longer be relied upon ({Runtime::Held#check!},
  # `hold(interrupt: true)`).
  class LeaseLost
    # @return [String] the resource name
    attr_reader :resource
    # @return [Integer] the token that was held
    attr_reader :token
    # @return [Symbol] the holder's state: `:at_risk`, `:expired`, `:fenced`
    #   or `:released`
    attr_reader :state
    # @return [Symbol, nil] why it was lost: a rejection reason,
    #   `:ttl_elapsed`, `:fenced`, `:reissued`, `:forked` or `:released`; nil
    #   while at risk
    attr_reader :reason

    def initialize(resource:, token:, state:, reason: nil)
      @resource = resource
      @token = token
      @state = state
      @reason = reason
      detail = reason ? " (#{reason})" : ""
      super("lease on #{resource.inspect} with token #{token} is #{state}#{detail}")
    end
  end

  # `hold!` could not acquire the lease within its wait: the block did not run.
  class Occupied
    # @return [String] the resource name
    attr_reader :resource
    # @return [Decision] the last rejection
    attr_reader :decision

    def initialize(resource:, decision:)
      @resource = resource
      @decision = decision
      super("#{resource.inspect} could not be acquired: #{decision.reason}")
    end
  end
end
