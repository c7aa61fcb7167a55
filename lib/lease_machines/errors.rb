# frozen_string_literal: true

# Every error the gem raises, declared here once (before the extension, which resolves StoreError).
module LeaseMachines
  # The base of every error below: `rescue LeaseMachines::Error` catches them all.
  class Error < StandardError; end

  # A store could not make a decision durable: nothing was committed.
  class StoreError < Error; end

  # The connection failed while COMMIT was in flight: nobody may act on the decision.
  class OutcomeUnknownError < StoreError; end

  # A fence refused a write: the token is below the resource's mark, or 0.
  class FencedError < Error; end

  # A bound fence refused a token the store never issued for the resource.
  class UnknownTokenError < FencedError; end

  # A strict fence refused an issued token whose lease is no longer live.
  class ExpiredTokenError < FencedError; end

  # A fence refused a token equal to its mark shown by another owner than the one that set it: reissued.
  class ReissuedTokenError < FencedError; end

  # A fence with signing keys refused a token whose proof none of its keys made.
  class ForgedTokenError < UnknownTokenError; end

  # A plain save of an existing row of a fenced model (Fences::Record) would
  # write without comparing tokens: refused, nothing was written.
  class UnfencedWriteError < Error; end

  # A held lease can no longer be relied upon (at risk, expired or fenced): {Runtime::Held#check!},
  # `hold(interrupt: true)`.
  class LeaseLost < Error
    attr_reader :resource, :token, :state, :reason

    def initialize(resource:, token:, state:, reason: nil)
      @resource = resource
      @token = token
      @state = state
      @reason = reason
      super("lease on #{resource.inspect} with token #{token} is #{state}#{" (#{reason})" if reason}")
    end
  end

  # `hold!` (or a job's lease) could not acquire the resource within its wait: another owner holds it.
  class Occupied < Error
    attr_reader :resource, :decision

    def initialize(resource:, decision:)
      @resource = resource
      @decision = decision
      super("#{resource.inspect} could not be acquired: #{decision.reason}")
    end
  end

  # An integration needs a setting nobody gave (a store, most often).
  class NotConfiguredError < Error; end

  # A job that declares a lease asked for it while running outside the code
  # that holds it (a Sidekiq job's `perform` called directly).
  class NotLeasedError < Error; end
end
