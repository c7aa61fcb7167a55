# frozen_string_literal: true

require_relative "../errors"

module LeaseMachines
  # A held lease can no longer be relied upon ({Runtime::Held#check!}, `hold(interrupt: true)`).
  class LeaseLost
    attr_reader :resource, :token, :state, :reason

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
    attr_reader :resource, :decision

    def initialize(resource:, decision:)
      @resource = resource
      @decision = decision
      super("#{resource.inspect} could not be acquired: #{decision.reason}")
    end
  end
end
