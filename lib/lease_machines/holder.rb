# frozen_string_literal: true

module LeaseMachines
  # The worker's side of one lease, on the worker's own clock.
  class Holder
    attr_reader :cadence

    def initialize(token:, at:, cadence:)
      _init(token, at, cadence)
      @cadence = cadence
    end

    def confirm(token:, at:) = _confirm(token, at)

    def reacquire(token:, at:) = _reacquire(token, at)

    def inspect
      "#<#{self.class.name} state=#{state.inspect} token=#{token} confirmed_at=#{confirmed_at} " \
        "warning_deadline=#{warning_deadline.inspect}>"
    end
    alias to_s inspect
  end
end
