# frozen_string_literal: true

require "test_helper"
require "support/entry_points"

module LeaseMachines
  # Values of the right type but out of range, at every entry point: negative
  # or too large owners and tokens (RangeError), token 0 where an issued token
  # is required (RangeError), negative, NaN, infinite or unrepresentable times
  # (ArgumentError). Every call that raises leaves its subject as it was.
  #
  # Every value here has the type the signatures promise (Integer or Float),
  # so this file also runs under RBS runtime type checking; the wrong types
  # are in argument_types_test.rb.
  class ArgumentRangesTest < Minitest::Test
    TOO_LARGE_INTEGERS = [2**64, 2**100].freeze
    NEGATIVE_INTEGERS = [-1, -(2**64), -(2**100)].freeze
    TIME_TOO_LARGE = [2**64, 2**100, 1e30, 2.0**64, Float::MAX].freeze
    TIME_NOT_FINITE_OR_NEGATIVE = [-1, -0.5, -(2**64), -(2**100), -1e30, Float::NAN, Float::INFINITY, -Float::INFINITY].freeze

    def test_every_slot_takes_its_valid_value
      EntryPoints.all.each do |slot|
        subject = slot.subject.call
        slot.call.call(subject, slot.valid)
      end
      changing = EntryPoints.all.reject { |slot| slot.subject.call.nil? || slot.label.include?("?") }

      assert_equal 19, changing.size # the constructors have no subject to change
      changing.each do |slot|
        subject = slot.subject.call
        before = slot.snapshot.call(subject)
        slot.call.call(subject, slot.valid)

        refute_equal before, slot.snapshot.call(subject), "#{slot} with #{slot.valid.inspect} should change its subject"
      end
    end

    def test_owners_and_presented_tokens_out_of_range
      pairs(EntryPoints.of_kind(:owner, :presented), NEGATIVE_INTEGERS + TOO_LARGE_INTEGERS).each do |slot, value|
        assert_refused(slot, value, RangeError, "#{slot.name} must be an Integer in #{OWNER_RANGE}, got #{value}")
      end
    end

    def test_issued_tokens_out_of_range
      pairs(EntryPoints.of_kind(:issued), NEGATIVE_INTEGERS + TOO_LARGE_INTEGERS).each do |slot, value|
        assert_refused(slot, value, RangeError, "#{slot.name} must be an Integer in #{TOKEN_RANGE}, got #{value}")
      end
    end

    def test_token_zero_where_an_issued_token_is_required
      EntryPoints.of_kind(:issued).each do |slot|
        assert_refused(slot, 0, RangeError, "#{slot.name} must be an Integer in #{TOKEN_RANGE} (tokens start at 1), got 0")
      end
      EntryPoints.of_kind(:optional).each do |slot|
        assert_refused(slot, 0, RangeError, "#{slot.name} must be nil or an Integer in #{TOKEN_RANGE}, got 0")
      end
    end

    def test_optional_marks_out_of_range
      pairs(EntryPoints.of_kind(:optional), NEGATIVE_INTEGERS + TOO_LARGE_INTEGERS).each do |slot, value|
        assert_refused(slot, value, RangeError, "#{slot.name} must be nil or an Integer in #{TOKEN_RANGE}, got #{value}")
      end
    end

    def test_token_zero_where_a_token_is_checked_is_simply_stale
      authority = granted_authority

      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: 0, now: 11, ttl: 5)
      assert_same Decision.rejected(:stale_token), authority.release(owner: 7, token: 0, now: 11)
      refute Fence.new.accept(0)
      holder = Holder.new(token: 1, at: 0, cadence: Cadence.new(ttl: 30, renew_after: 10, warn_before: 5))

      refute holder.confirm(token: 0, at: 1)
      refute holder.reacquire(token: 0, at: 1)
    end

    def test_negative_not_finite_and_too_large_times
      slots = EntryPoints.of_kind(:time)
      pairs(slots, TIME_NOT_FINITE_OR_NEGATIVE).each do |slot, value|
        assert_refused(slot, value, ArgumentError,
                       "#{slot.name} must be a finite, non-negative number of seconds, got #{value.inspect}")
      end
      pairs(slots, TIME_TOO_LARGE).each do |slot, value|
        assert_refused(slot, value, ArgumentError, "#{slot.name} is too large to represent " \
                                                   "(at most 18446744073709551615.999999999 seconds), got #{value.inspect}")
      end
    end

    # Exact instants follow the rule of every other time: an Integer out of
    # range is an ArgumentError, whatever its size or sign.
    def test_exact_instants_past_the_last_nanosecond
      last = ((2**64) * 1_000_000_000) - 1

      assert_equal last, Lease.exact(owner: 1, token: 1, expires_at_ns: last).expires_at_ns
      pairs(EntryPoints.of_kind(:nanos), [last + 1, 2**128, 2**200]).each do |slot, value|
        assert_refused(slot, value, ArgumentError, "#{slot.name} is too large to represent " \
                                                   "(at most 18446744073709551615.999999999 seconds), got #{value}")
      end
    end

    def test_negative_exact_instants
      pairs(EntryPoints.of_kind(:nanos), [-1, -(2**64), -(2**200)]).each do |slot, value|
        assert_refused(slot, value, ArgumentError,
                       /\A#{slot.name} must be a non-negative Integer \(nanoseconds\), got #{value}\b/)
      end
    end

    def test_the_edges_of_the_ranges_are_accepted
      assert_equal U64_MAX, Lease.new(owner: U64_MAX, token: U64_MAX, expires_at: U64_MAX).owner
      assert_equal 0, Lease.new(owner: 0, token: 1, expires_at: 0).owner
      assert_equal U64_MAX * 1_000_000_000, Lease.new(owner: 0, token: 1, expires_at: U64_MAX).expires_at_ns
      largest_float = (2.0**64) - 2048 # the largest Float below 2**64

      assert_equal largest_float.to_i * 1_000_000_000, Lease.new(owner: 0, token: 1, expires_at: largest_float).expires_at_ns
      assert_equal U64_MAX, Fence.new(highest: U64_MAX).highest
      assert_equal U64_MAX, Checkpoint.from_parts(last_issued: U64_MAX, lease: nil, observed: 0).last_issued
    end

    def test_negative_zero_and_tiny_floats_are_instants_at_the_origin
      assert_equal 0, Lease.new(owner: 0, token: 1, expires_at: -0.0).expires_at_ns
      assert_equal 0, Lease.new(owner: 0, token: 1, expires_at: Float::MIN).expires_at_ns
      assert_equal 1, Lease.new(owner: 0, token: 1, expires_at: 1e-9).expires_at_ns
    end

    def test_a_zero_ttl_is_a_decision_but_a_zero_cadence_is_an_error
      assert_same Decision.rejected(:invalid_ttl), Authority.new.acquire(owner: 1, now: 0, ttl: 0)
      assert_raises(ArgumentError) { Cadence.new(ttl: 0, renew_after: 1, warn_before: 0) }
    end

    def test_an_inconsistent_checkpoint_is_refused_and_changes_nothing
      authority = granted_authority
      before = authority.checkpoint
      lease = Lease.new(owner: 1, token: 9, expires_at: 100)

      assert_raises(ArgumentError) { Authority.restore(Checkpoint.from_parts(last_issued: 8, lease: lease, observed: 50)) }
      assert_equal before, authority.checkpoint
    end
  end
end
