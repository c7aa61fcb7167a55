# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Value objects survive Marshal exactly; a forged dump is refused.
  class MarshalTest < Minitest::Test
    def round_trip(value)
      Marshal.load(Marshal.dump(value)) # our own dump
    end

    def test_values_round_trip_through_marshal_exactly
      authority = Authority.new
      granted = authority.acquire(owner: U64_MAX, now: 0.1, ttl: 0.2)
      values = [granted, granted.lease, authority.checkpoint, authority.acquire(owner: 1, now: 0.2, ttl: 1),
                Decision::RELEASED, Authority.new.checkpoint,
                authority.renew(owner: U64_MAX, token: 1, now: 0.25, ttl: 1)]

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
  end
end
