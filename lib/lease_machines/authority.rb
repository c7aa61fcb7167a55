# frozen_string_literal: true

module LeaseMachines
  # Decides who holds one resource and until when, in one process (between
  # processes, use a store). Every decision is made by the Rust core. A `dup`
  # forks the history: never let two copies serve the same resource.
  class Authority
    include Runtime::Holding::OnCallerClock # hold, hold! (docs/RUNTIME.md)

    # @param clock_policy [Symbol] `:reject` (default) refuses a `now` earlier
    #   than one already observed; `:clamp` evaluates it at the latest observed instant.
    def initialize(clock_policy: :reject)
      _init(clock_policy)
    end

    # Rebuilds an authority from a {Checkpoint}.
    def self.restore(checkpoint, clock_policy: :reject)
      authority = allocate
      authority.__send__(:_restore, checkpoint, clock_policy)
      authority
    end

    # @return [Decision] `:granted` with a new lease, or `:rejected`
    def acquire(owner:, now:, ttl:)
      _acquire(owner, now, ttl)
    end

    # Like {#acquire}, but the live lease's own owner gets a new grant with a new token.
    # @return [Decision]
    def reacquire(owner:, now:, ttl:)
      _reacquire(owner, now, ttl)
    end

    # @return [Decision] `:renewed` (same token, expiry `max(old, now + ttl)`) or `:rejected`
    def renew(owner:, token:, now:, ttl:)
      _renew(owner, token, now, ttl)
    end

    # @return [Decision] `:released` or `:rejected`
    def release(owner:, token:, now:)
      _release(owner, token, now)
    end

    def inspect
      state = checkpoint
      "#<#{self.class.name} clock_policy=#{clock_policy.inspect} last_issued=#{state.last_issued.inspect} " \
        "lease=#{state.lease.inspect} observed=#{state.observed}>"
    end
    alias to_s inspect
  end
end
