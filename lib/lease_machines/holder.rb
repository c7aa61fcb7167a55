# frozen_string_literal: true

module LeaseMachines
  # The worker's side of one lease, on the worker's own clock: when to renew,
  # when to be nervous, when to stop. States: `:confirmed`, `:unconfirmed`,
  # `:at_risk`, `:expired`, `:fenced` (terminal).
  #
  # `dup`/`clone` copy the state; `freeze` makes every transition raise FrozenError.
  class Holder
    # @return [Cadence]
    attr_reader :cadence

    def initialize(token:, at:, cadence:)
      _init(token, at, cadence)
      @cadence = cadence
    end

    # The authority confirmed `token` at `at` (pass the instant the renewal was
    # sent). An older token is a stale reply: ignored, false.
    def confirm(token:, at:)
      _confirm(token, at)
    end

    # A new grant: only a strictly newer token recovers the holder.
    def reacquire(token:, at:)
      _reacquire(token, at)
    end

    def inspect
      "#<#{self.class.name} state=#{state.inspect} token=#{token} confirmed_at=#{confirmed_at} " \
        "warning_deadline=#{warning_deadline.inspect}>"
    end
    alias to_s inspect
  end
end
