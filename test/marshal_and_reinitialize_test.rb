# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Value objects survive Marshal exactly; live objects cannot be initialized twice.
  class MarshalAndReinitializeTest < Minitest::Test
    def round_trip(value)
      Marshal.load(Marshal.dump(value)) # our own dump
    end

    def test_values_round_trip_through_marshal_exactly
      authority = Authority.new
      granted = authority.acquire(owner: (2**64) - 1, now: 0.1, ttl: 0.2)
      values = [granted, granted.lease, authority.checkpoint, authority.acquire(owner: 1, now: 0.2, ttl: 1),
                Decision::RELEASED, Authority.new.checkpoint,
                authority.renew(owner: (2**64) - 1, token: 1, now: 0.25, ttl: 1)]

      values.each do |value|
        copy = round_trip(value)

        assert_equal value, copy
        assert_predicate copy, :frozen?
        assert_instance_of value.class, copy
      end
      assert_equal 300_000_000, round_trip(granted.lease).expires_at_ns
      assert_same Decision::REJECTIONS.first, round_trip(Decision::REJECTIONS.first)
    end

    def test_a_restored_checkpoint_from_marshal_continues_the_history
      authority = Authority.new
      authority.acquire(owner: 7, now: 0, ttl: 30)
      restored = Authority.restore(round_trip(authority.checkpoint))

      assert_equal :occupied, restored.acquire(owner: 8, now: 29.999999999, ttl: 1).reason
      assert_equal 2, restored.acquire(owner: 8, now: 30, ttl: 1).lease.token
    end

    def test_tampered_marshal_data_is_refused
      dump = Marshal.dump(Checkpoint.exact(last_issued: 3, lease: nil, observed_ns: 5))
      forged = dump.sub("3 5", "0 5")

      assert_raises(RangeError) { Marshal.load(forged) } # rubocop:disable Security/MarshalLoad -- the point of the test
    end

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
  end
end
