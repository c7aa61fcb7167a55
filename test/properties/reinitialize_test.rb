# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Live objects cannot be initialized twice: calling initialize,
  # initialize_copy or _restore again raises and leaves the object as it was.
  class ReinitializeTest < Minitest::Test
    def test_an_authority_cannot_be_initialized_again
      authority = Authority.new
      authority.acquire(owner: 1, now: 0, ttl: 10)
      before = authority.checkpoint

      error = assert_raises(RuntimeError) { authority.__send__(:initialize) }
      assert_equal "LeaseMachines::Authority is already initialized; it cannot start over", error.message
      assert_raises(RuntimeError) { authority.__send__(:_restore, Authority.new.checkpoint, :reject) }
      assert_raises(RuntimeError) { authority.__send__(:initialize_copy, Authority.new) }
      assert_equal before, authority.checkpoint
      assert_equal 2, authority.reacquire(owner: 1, now: 1, ttl: 10).lease.token
    end

    def test_a_fence_cannot_be_initialized_again
      fence = Fence.new(highest: 9)

      assert_raises(RuntimeError) { fence.__send__(:initialize) }
      assert_raises(RuntimeError) { fence.__send__(:initialize_copy, Fence.new) }
      assert_equal 9, fence.highest
      refute fence.accept(8)
    end

    def test_a_holder_cannot_be_initialized_again
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      holder = Holder.new(token: 4, at: 0, cadence: cadence)
      holder.fence

      assert_raises(RuntimeError) { holder.__send__(:initialize, token: 9, at: 0, cadence: cadence) }
      assert_raises(RuntimeError) { holder.__send__(:initialize_copy, Holder.new(token: 1, at: 0, cadence: cadence)) }
      assert_equal :fenced, holder.state
      assert_equal 4, holder.token
    end

    # An object made with `allocate` that decided before any initialize has a
    # history: initialize must not start it over (it would reissue token 1).
    def test_an_allocated_authority_that_decided_cannot_be_initialized
      authority = Authority.allocate
      assert_equal 1, authority.acquire(owner: 1, now: 0, ttl: 10).lease.token

      error = assert_raises(RuntimeError) { authority.__send__(:initialize) }
      assert_equal "LeaseMachines::Authority is already initialized; it cannot start over", error.message
      assert_equal 2, authority.acquire(owner: 2, now: 100, ttl: 10).lease.token
    end

    def test_an_allocated_fence_that_accepted_cannot_be_initialized
      fence = Fence.allocate
      assert fence.accept(5)

      assert_raises(RuntimeError) { fence.__send__(:initialize) }
      refute fence.accept(3), "the mark survives"
      assert_equal 5, fence.highest
    end
  end
end
