# frozen_string_literal: true

module LeaseMachines
  # Decides who holds one resource and until when, in one process (between processes, use a store). A `dup` forks
  # the history: never let two copies serve the same resource.
  class Authority
    include Runtime::Holding::OnCallerClock # hold, hold! (docs/RUNTIME.md)

    def initialize(clock_policy: :reject) = _init(clock_policy)

    def self.restore(checkpoint, clock_policy: :reject)
      allocate.tap { |authority| authority.__send__(:_restore, checkpoint, clock_policy) }
    end

    def acquire(owner:, now:, ttl:) = _acquire(owner, now, ttl)

    def reacquire(owner:, now:, ttl:) = _reacquire(owner, now, ttl)

    def renew(owner:, token:, now:, ttl:) = _renew(owner, token, now, ttl)

    def release(owner:, token:, now:) = _release(owner, token, now)

    def inspect
      state = checkpoint
      "#<#{self.class.name} clock_policy=#{clock_policy.inspect} last_issued=#{state.last_issued.inspect} " \
        "lease=#{state.lease.inspect} observed=#{state.observed}>"
    end
    alias to_s inspect
  end
end
