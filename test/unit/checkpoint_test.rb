# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"

module LeaseMachines
  # Checkpoints: the authority's whole state, exact to the nanosecond, and
  # Authority.restore continuing the history.
  class CheckpointTest < Minitest::Test
    include ValueAssertions

    def test_a_fresh_history
      checkpoint = Authority.new.checkpoint

      assert_nil checkpoint.last_issued
      assert_nil checkpoint.lease
      assert_equal 0, checkpoint.observed_ns
      assert_equal 0.0, checkpoint.observed
    end

    def test_it_captures_the_mark_the_lease_and_the_clock
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      checkpoint = authority.checkpoint

      assert_equal 1, checkpoint.last_issued
      assert_equal Lease.new(owner: 7, token: 1, expires_at: 15), checkpoint.lease
      assert_equal 10_000_000_000, checkpoint.observed_ns
    end

    def test_an_expired_lease_stays_in_the_record_and_a_release_clears_it
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      authority.acquire(owner: 7, now: 11, ttl: 5)
      authority.release(owner: 99, token: 99, now: 30)

      assert_equal 15, authority.checkpoint.lease.expires_at
      authority.acquire(owner: 8, now: 31, ttl: 5)
      authority.release(owner: 8, token: 2, now: 32)

      assert_nil authority.checkpoint.lease
      assert_equal 2, authority.checkpoint.last_issued
    end

    def test_times_are_exact_nanoseconds_not_float_sums
      decision = Authority.new.acquire(owner: 1, now: 0.1, ttl: 0.2)

      refute_equal 0.3, 0.1 + 0.2
      assert_equal 300_000_000, decision.lease.expires_at_ns
      assert_equal 0.3, decision.lease.expires_at
    end

    def test_from_parts_accepts_parts_of_one_history
      lease = Lease.new(owner: 7, token: 3, expires_at: 9)

      assert_nil Checkpoint.from_parts(last_issued: nil, lease: nil, observed: 0).last_issued
      assert_equal lease, Checkpoint.from_parts(last_issued: 3, lease: lease, observed: 4).lease
      assert_equal 5, Checkpoint.from_parts(last_issued: 5, lease: lease, observed: 4).last_issued
      assert_equal 4_500_000_000, Checkpoint.from_parts(last_issued: 5, lease: nil, observed: 4.5).observed_ns
    end

    def test_from_parts_refuses_a_lease_that_was_never_issued
      lease = Lease.new(owner: 7, token: 3, expires_at: 9)

      assert_error(ArgumentError, "inconsistent checkpoint: lease token 3 was never issued (last_issued is 2)") do
        Checkpoint.from_parts(last_issued: 2, lease: lease, observed: 0)
      end
      assert_error(ArgumentError, "inconsistent checkpoint: lease token 3 was never issued (last_issued is nil)") do
        Checkpoint.from_parts(last_issued: nil, lease: lease, observed: 0)
      end
    end

    def test_from_parts_refuses_a_mark_of_zero_and_bad_times
      assert_error(RangeError, "last_issued must be nil or an Integer in #{TOKEN_RANGE}, got 0") do
        Checkpoint.from_parts(last_issued: 0, lease: nil, observed: 0)
      end
      assert_error(RangeError, "last_issued must be nil or an Integer in #{TOKEN_RANGE}, got #{2**64}") do
        Checkpoint.from_parts(last_issued: 2**64, lease: nil, observed: 0)
      end
      assert_error(ArgumentError, "observed must be a finite, non-negative number of seconds, got -0.5") do
        Checkpoint.from_parts(last_issued: nil, lease: nil, observed: -0.5)
      end
    end

    def test_new_is_from_parts
      lease = Lease.new(owner: 7, token: 3, expires_at: 9)

      assert_equal Checkpoint.from_parts(last_issued: 3, lease: lease, observed: 1),
                   Checkpoint.new(last_issued: 3, lease: lease, observed: 1)
      assert_raises(ArgumentError) { Checkpoint.new(last_issued: 2, lease: lease, observed: 0) }
    end

    def test_restore_round_trips_exactly_with_fractional_times
      authority = Authority.new
      authority.acquire(owner: 7, now: 1_700_000_000.123456789, ttl: 0.000000301)
      original = authority.checkpoint
      restored = Authority.restore(original).checkpoint

      assert_equal original, restored
      assert_equal original.observed_ns, restored.observed_ns
      assert_equal original.lease.expires_at_ns, restored.lease.expires_at_ns
      assert_equal original.observed_ns + 301, restored.lease.expires_at_ns
    end

    def test_a_restored_authority_behaves_exactly_like_the_original
      original = Authority.new
      script = [
        [:acquire, { owner: 7, now: 0.25, ttl: 1.5 }],
        [:renew, { owner: 7, token: 1, now: 1.0, ttl: 1.5 }],
        [:acquire, { owner: 12, now: 2.0, ttl: 1.5 }],
        [:acquire, { owner: 12, now: 2.5, ttl: 1.5 }],
        [:release, { owner: 7, token: 1, now: 2.6 }],
        [:renew, { owner: 12, token: 2, now: 2.4, ttl: 1 }],
        [:reacquire, { owner: 12, now: 3.0, ttl: 0.125 }],
        [:release, { owner: 12, token: 3, now: 3.0625 }],
        [:acquire, { owner: 7, now: 3.0625, ttl: 9 }]
      ]
      script.each_with_index do |(verb, arguments), index|
        restored = Authority.restore(original.checkpoint)
        expected = original.public_send(verb, **arguments)
        actual = restored.public_send(verb, **arguments)

        assert_equal expected, actual, "step #{index}: #{verb} #{arguments}"
        assert_equal original.checkpoint, restored.checkpoint, "step #{index}"
      end
      assert_equal 4, original.checkpoint.last_issued
    end

    # A store keeps exact nanoseconds; Float seconds far from the origin cannot.
    def test_exact_constructors_rebuild_a_checkpoint_to_the_nanosecond
      authority = Authority.new
      authority.acquire(owner: 7, now: 1_700_000_000.5, ttl: 0.000000001)
      original = authority.checkpoint
      lease = Lease.exact(owner: 7, token: 1, expires_at_ns: original.lease.expires_at_ns)
      rebuilt = Checkpoint.exact(last_issued: 1, lease: lease, observed_ns: original.observed_ns)

      assert_equal original, rebuilt
      assert_equal 1_700_000_000_500_000_001, rebuilt.lease.expires_at_ns
      assert_equal Authority.restore(original).checkpoint, Authority.restore(rebuilt).checkpoint
      lossy = Lease.new(owner: 7, token: 1, expires_at: original.lease.expires_at)

      refute_equal original.lease, lossy, "Float seconds this far from the origin were expected to lose the nanosecond"
    end

    def test_exact_constructors_refuse_what_from_parts_refuses
      lease = Lease.exact(owner: 7, token: 3, expires_at_ns: 9)

      assert_error(ArgumentError, "inconsistent checkpoint: lease token 3 was never issued (last_issued is 2)") do
        Checkpoint.exact(last_issued: 2, lease: lease, observed_ns: 0)
      end
      assert_error(ArgumentError, "inconsistent checkpoint: lease token 3 was never issued (last_issued is nil)") do
        Checkpoint.exact(last_issued: nil, lease: lease, observed_ns: 0)
      end
      assert_equal Checkpoint.from_parts(last_issued: 3, lease: Lease.new(owner: 7, token: 3, expires_at: 0.000000009),
                                         observed: 0.000000004),
                   Checkpoint.exact(last_issued: 3, lease: lease, observed_ns: 4)
    end

    def test_a_restored_history_continues_its_tokens
      lease = Lease.new(owner: 7, token: 3, expires_at: 9)
      authority = Authority.restore(Checkpoint.from_parts(last_issued: 5, lease: lease, observed: 4))

      assert_predicate authority.renew(owner: 7, token: 3, now: 5, ttl: 10), :renewed?
      assert_same Decision.rejected(:occupied), authority.acquire(owner: 8, now: 6, ttl: 1)
      assert_same Decision.rejected(:clock_regressed), authority.acquire(owner: 8, now: 3, ttl: 1)
      assert_equal 6, authority.acquire(owner: 8, now: 15, ttl: 1).lease.token
    end

    def test_restoring_does_not_share_state_with_the_checkpoint_or_other_authorities
      checkpoint = granted_authority.checkpoint
      first = Authority.restore(checkpoint)
      second = Authority.restore(checkpoint)
      first.release(owner: 7, token: 1, now: 11)

      assert_equal checkpoint, second.checkpoint
      assert_equal 1, checkpoint.lease.token
      refute_equal checkpoint, first.checkpoint
    end

    def test_checkpoint_value_semantics
      make = ->(mark, value, observed) { Checkpoint.from_parts(last_issued: mark, lease: value, observed: observed) }
      checkpoint = make.call(3, lease(token: 3), 2.5)

      assert_value_semantics(checkpoint, make.call(3, lease(token: 3, expires_at: 15.0), 2.5),
                             make.call(4, lease(token: 3), 2.5), make.call(3, nil, 2.5),
                             make.call(3, lease(token: 2), 2.5), make.call(3, lease(token: 3), 2.500000001))
    end

    def test_checkpoint_to_h_deconstruct_and_inspect
      checkpoint = Checkpoint.from_parts(last_issued: 3, lease: lease(token: 3), observed: 2.5)

      assert_equal({ last_issued: 3, lease: { owner: 7, token: 3, expires_at: 15.0 }, observed: 2.5 }, checkpoint.to_h)
      case checkpoint
      in { last_issued: Integer => mark, lease: Lease => value, observed: Float => observed }
        assert_equal [3, lease(token: 3), 2.5], [mark, value, observed]
      end
      assert_equal "#<LeaseMachines::Checkpoint last_issued=3 " \
                   "lease=#<LeaseMachines::Lease owner=7 token=3 expires_at=15.0> observed=2.5>", checkpoint.inspect
      assert_equal "#<LeaseMachines::Checkpoint last_issued=nil lease=nil observed=0.0>", Authority.new.checkpoint.to_s
    end

    def test_checkpoints_and_their_leases_are_frozen_for_good
      checkpoint = granted_authority.checkpoint

      assert_stays_frozen(checkpoint)
      assert_stays_frozen(checkpoint.lease)
      assert_stays_frozen(Cadence.new(ttl: 30, renew_after: 10, warn_before: 5))
    end
  end
end
