# frozen_string_literal: true

require_relative "../test_helper"
require "lease_machines/stores"

module LeaseMachines
  # Native.decide_row: what every store decides with. Columns are decimal text
  # as stored (last_issued, lease_owner, lease_token, lease_expires_at_ns,
  # observed_ns); instants are nanoseconds.
  class DecideRowTest < Minitest::Test
    ACQUIRE = 0
    REACQUIRE = 1
    RENEW = 2
    RELEASE = 3
    SECOND = 1_000_000_000

    def decide(columns, kind, owner: 1, token: nil, now: 10 * SECOND, ttl: 5 * SECOND)
      Native.decide_row("res", columns, kind, owner, token, now, ttl)
    end

    def test_a_first_grant_on_a_resource_with_no_row
      decision, after = decide(nil, ACQUIRE, owner: 7)
      assert_equal Decision.new(status: :granted, lease: Lease.exact(owner: 7, token: 1, expires_at_ns: 15 * SECOND)),
                   decision
      assert_equal ["1", "7", "1", (15 * SECOND).to_s, (10 * SECOND).to_s], after
    end

    def test_the_same_rules_as_an_authority_on_the_nanosecond_timeline
      row = ["3", "7", "3", (15 * SECOND).to_s, (10 * SECOND).to_s]
      assert_equal [Decision.rejected(:occupied), ["3", "7", "3", (15 * SECOND).to_s, (12 * SECOND).to_s]],
                   decide(row, ACQUIRE, owner: 8, now: 12 * SECOND)
      renewed, after = decide(row, RENEW, owner: 7, token: 3, now: 11 * SECOND, ttl: 9 * SECOND)
      assert_predicate renewed, :renewed?
      assert_equal 20 * SECOND, renewed.lease.expires_at_ns
      assert_equal ["3", "7", "3", (20 * SECOND).to_s, (11 * SECOND).to_s], after
      rotated, after = decide(row, REACQUIRE, owner: 7, now: 11 * SECOND)
      assert_equal 4, rotated.lease.token
      assert_equal "4", after.first
      assert_same Decision::RELEASED, decide(row, RELEASE, owner: 7, token: 3, now: 11 * SECOND).first
      assert_equal ["3", nil, nil, nil, (11 * SECOND).to_s], decide(row, RELEASE, owner: 7, token: 3, now: 11 * SECOND).last
      assert_equal Decision.rejected(:stale_token), decide(row, RENEW, owner: 7, token: 0).first
    end

    def test_the_clock_is_clamped_and_an_unchanged_row_is_not_written
      row = ["3", "7", "3", (15 * SECOND).to_s, (10 * SECOND).to_s]
      assert_equal [Decision.rejected(:occupied), nil], decide(row, ACQUIRE, owner: 8, now: 10 * SECOND)
      # An instant before the observed one is evaluated at the observed one.
      assert_equal [Decision.rejected(:occupied), nil], decide(row, ACQUIRE, owner: 8, now: 1)
      assert_nil decide(nil, RELEASE, owner: 1, token: 1, now: 0).last, "nothing to write for an unused resource"
    end

    def test_the_whole_u64_range_round_trips_exactly
      row = [U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, (U64_MAX - 1).to_s, (U64_MAX - 2).to_s]
      decision, after = decide(row, RENEW, owner: U64_MAX, token: U64_MAX, now: U64_MAX - 2, ttl: 2)
      assert_equal Lease.exact(owner: U64_MAX, token: U64_MAX, expires_at_ns: U64_MAX), decision.lease
      assert_equal [U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, (U64_MAX - 2).to_s], after
      assert_equal Decision.rejected(:deadline_overflow),
                   decide(row, RENEW, owner: U64_MAX, token: U64_MAX, now: U64_MAX - 2, ttl: 3).first
      assert_equal Decision.rejected(:tokens_exhausted),
                   decide([U64_MAX.to_s, nil, nil, nil, "0"], ACQUIRE, now: 0).first
    end

    def test_a_row_no_history_can_produce_is_a_store_error
      {
        %w[5 1 6 10 0] => /lease's token was never issued/,
        [nil, "1", "1", "10", "0"] => /lease's token was never issued/,
        ["5", "1", nil, "10", "0"] => /all or none/,
        ["5", nil, nil, nil, nil] => /observed_ns is nil/,
        ["0", nil, nil, nil, "0"] => /last_issued is 0/,
        %w[5 1 0 10 0] => /lease_token is 0/,
        ["007", nil, nil, nil, "0"] => /last_issued is "007"/,
        ["+5", nil, nil, nil, "0"] => /last_issued is "\+5"/,
        ["", nil, nil, nil, "0"] => /last_issued is ""/,
        [" 5", nil, nil, nil, "0"] => /last_issued is " 5"/,
        ["-1", nil, nil, nil, "0"] => /last_issued is "-1"/,
        ["1.0", nil, nil, nil, "0"] => /last_issued is "1.0"/,
        [(2**64).to_s, nil, nil, nil, "0"] => /last_issued is "18446744073709551616"/,
        ["5", nil, nil, nil, 0] => /observed_ns is 0/,
        ["5", nil, nil, nil] => /got \["5", nil, nil, nil\]/
      }.each do |columns, message|
        error = assert_raises(StoreError, columns.inspect) { decide(columns, ACQUIRE) }
        assert_match(/\Athe stored row for resource "res" is not a valid checkpoint: /, error.message)
        assert_match message, error.message
      end
      error = assert_raises(StoreError) { decide("5", ACQUIRE) }
      assert_match(/got "5"/, error.message)
    end

    def test_a_stored_row_reads_as_a_checkpoint_on_the_real_timeline
      lease = Lease.exact(owner: 7, token: 3, expires_at_ns: U64_MAX)
      assert_equal Checkpoint.exact(last_issued: 3, lease: lease, observed_ns: 10 * SECOND),
                   Native.stored_checkpoint("res", ["3", "7", "3", U64_MAX.to_s, (10 * SECOND).to_s])
      assert_equal Checkpoint.exact(last_issued: nil, lease: nil, observed_ns: 0), Native.stored_checkpoint("res", nil)
      error = assert_raises(StoreError) { Native.stored_checkpoint("res", ["5", "1", nil, "10", "0"]) }
      assert_match(/\Athe stored row for resource "res" is not a valid checkpoint: .*all or none/, error.message)
    end

    def test_arguments_are_converted_strictly
      assert_raises(RangeError) { decide(nil, ACQUIRE, owner: -1) }
      assert_raises(TypeError) { decide(nil, ACQUIRE, owner: 1.0) }
      assert_raises(TypeError) { decide(nil, RENEW, token: nil) }
      assert_raises(TypeError) { decide(nil, ACQUIRE, ttl: nil) }
      assert_raises(RangeError) { decide(nil, ACQUIRE, now: 2**64) }
      error = assert_raises(ArgumentError) { decide(nil, 4) }
      assert_equal "kind must be 0, 1, 2 or 3, got 4", error.message
      assert_predicate decide(nil, RELEASE, token: 1, ttl: nil).first, :rejected?, "release takes no ttl"
    end
  end
end
