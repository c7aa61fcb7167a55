# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # How many Ruby objects a decision allocates: rejections and releases none
  # (they answer with shared frozen decisions), grants and renewals at most
  # their Decision and Lease, fence checks none. Counted with
  # GC.stat(:total_allocated_objects) around a loop, after a warm-up; the count
  # is exact and does not depend on timing or on when the collector runs.
  class AllocationTest < Minitest::Test
    LOOPS = 1_000

    def setup
      skip "RBS runtime type checking wraps every call and allocates itself" if RBS_RUNTIME_CHECK
      # The counter's own call sites get their inline caches (which are objects)
      # the first time they run: let that happen before anything is counted.
      allocations_per_call(2) { nil }
    end

    # Objects allocated per call of the block, averaged over `calls` calls made
    # after `calls` warm-up calls (method caches, lazily created constants).
    def allocations_per_call(calls = iterations(LOOPS, floor: 20), &)
      repeat(calls, &)
      before = GC.stat(:total_allocated_objects)
      repeat(calls, &)
      (GC.stat(:total_allocated_objects) - before).fdiv(calls)
    end

    def test_the_counter_sees_an_allocation
      assert_equal(1.0, allocations_per_call { Object.new })
    end

    def test_a_granted_acquire_allocates_its_decision_and_lease_and_nothing_else
      authority = Authority.new
      now = 1_000.0
      count = allocations_per_call { authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0) }
      seconds = 1_000_000 # Integer times too
      in_seconds = allocations_per_call { authority.acquire(owner: 1, now: seconds += 10, ttl: 1) }

      assert_operator count, :<=, 2.0
      assert_operator in_seconds, :<=, 2.0
      assert_predicate authority.acquire(owner: 1, now: seconds += 10, ttl: 1), :granted?
    end

    def test_a_granted_reacquire_allocates_at_most_two
      authority = Authority.new
      now = 1_000.0
      count = allocations_per_call { authority.reacquire(owner: 1, now: now += 1.0, ttl: 5.0) }

      assert_operator count, :<=, 2.0
    end

    def test_a_renewal_allocates_at_most_two
      authority = granted_authority(owner: 7, now: 0, ttl: 10)
      now = 0.0
      count = allocations_per_call { authority.renew(owner: 7, token: 1, now: now += 1.0, ttl: 10.0) }

      assert_operator count, :<=, 2.0
      assert_predicate authority.renew(owner: 7, token: 1, now: now += 1.0, ttl: 10.0), :renewed?
    end

    def test_a_grant_at_a_realistic_epoch_time_keeps_expires_at_ns_a_fixnum
      now = Process.clock_gettime(Process::CLOCK_REALTIME)
      authority = Authority.new
      count = allocations_per_call { authority.acquire(owner: 1, now: now += 60.0, ttl: 30.0) }

      assert_operator count, :<=, 2.0
      expires_at_ns = authority.checkpoint.lease.expires_at_ns
      assert_operator expires_at_ns, :<=, (2**62) - 1, "a Unix-epoch nanosecond instant of this century is a Fixnum"
    end

    def test_rejections_allocate_nothing
      rejections.each do |reason, call|
        count = allocations_per_call(&call)

        assert_equal 0.0, count, "a #{reason.inspect} rejection allocated #{count} objects per call"
        assert_equal reason, call.call.reason
      end
    end

    def test_a_release_allocates_nothing
      authority = Authority.new
      now = 1_000.0
      pair = allocations_per_call do
        token = authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0).lease.token
        authority.release(owner: 1, token: token, now: now)
      end
      grant = allocations_per_call { authority.acquire(owner: 1, now: now += 10.0, ttl: 1.0) }

      assert_equal grant, pair, "releasing allocated #{pair - grant} objects per call"
    end

    def test_fence_accept_allocates_nothing
      fence = Fence.new
      assert_equal(0.0, allocations_per_call { fence.accept(7) })
      assert_equal(0.0, allocations_per_call { fence.accept(3) })
      assert_equal(0.0, allocations_per_call { fence.accept(0) })
      largest = U64_MAX # a Bignum, made once: only the call is counted
      assert_equal(0.0, allocations_per_call { fence.accept(largest) })
      refute fence.accept(7)
    end

    private

    # A bare loop: no block call or allocation of its own per iteration.
    def repeat(calls)
      i = 0
      while i < calls
        yield
        i += 1
      end
    end

    # { reason => a call on a prepared authority that answers with `reason` }
    def rejections
      held = granted_authority(owner: 7, now: 10, ttl: 1_000)
      largest = U64_MAX # a Bignum, made once: only the call is counted
      {
        occupied: -> { held.acquire(owner: 8, now: 11.0, ttl: 5.0) },
        clock_regressed: -> { held.acquire(owner: 8, now: 1.0, ttl: 5.0) },
        invalid_ttl: -> { held.acquire(owner: 8, now: 11.0, ttl: 0.0) },
        deadline_overflow: -> { held.renew(owner: 7, token: 1, now: 11.0, ttl: largest) },
        stale_token: -> { held.renew(owner: 7, token: 99, now: 11.0, ttl: 5.0) },
        not_owner: -> { held.release(owner: 8, token: 1, now: 11.0) }
      }.merge(rejections_of_other_histories)
    end

    def rejections_of_other_histories
      expired = granted_authority(owner: 7, now: 10, ttl: 5)
      expired.acquire(owner: 8, now: 20, ttl: 5) # token 2, until 25
      exhausted = Authority.restore(Checkpoint.from_parts(last_issued: U64_MAX, lease: nil, observed: 0))
      {
        expired: -> { expired.release(owner: 8, token: 2, now: 30.0) },
        tokens_exhausted: -> { exhausted.acquire(owner: 1, now: 1.0, ttl: 1.0) }
      }
    end
  end
end
