# frozen_string_literal: true

require_relative "../test_helper"
require "lease_machines/stores"

module LeaseMachines
  # Native::Request and the row codec (Native.row_checkpoint,
  # Native.row_columns): what every store decides with. Columns are decimal
  # text as stored (last_issued, lease_owner, lease_token,
  # lease_expires_at_ns, observed_ns); instants are nanoseconds since the Unix
  # epoch.
  class RowCodecTest < Minitest::Test
    SECOND = 1_000_000_000
    STORE_RANGE = "(its timeline is whole nanoseconds in 0..18446744073.709551615 seconds since the Unix epoch)"

    # A request with `now: nil`, decided at the store clock `now`
    # (nanoseconds); `ttl` in seconds.
    def decide(columns, kind, owner: 1, token: nil, now: 10 * SECOND, ttl: 5)
      request(kind, owner: owner, token: token, ttl: ttl).decide("res", columns, now, :sequence)
    end

    def request(kind, owner: 1, token: nil, now: nil, ttl: 5)
      case kind
      when :acquire then Native::Request.acquire(owner, now, ttl)
      when :reacquire then Native::Request.reacquire(owner, now, ttl)
      when :renew then Native::Request.renew(owner, token, now, ttl)
      when :release then Native::Request.release(owner, token, now)
      end
    end

    def test_a_request_says_whether_it_asks_for_a_grant
      assert_predicate Native::Request.acquire(1, nil, 1), :grant?
      assert_predicate Native::Request.reacquire(1, nil, 1), :grant?
      refute_predicate Native::Request.renew(1, 1, nil, 1), :grant?
      refute_predicate Native::Request.release(1, 1, nil), :grant?
    end

    def test_only_a_plain_acquire_is_refused_at_once_when_it_meets_another_write
      assert_same Decision.rejected(:occupied), Native::Request.acquire(1, nil, 1).on_contention
      assert_nil Native::Request.reacquire(1, nil, 1).on_contention
      assert_nil Native::Request.renew(1, 1, nil, 1).on_contention
      assert_nil Native::Request.release(1, 1, nil).on_contention
    end

    def test_a_first_grant_on_a_resource_with_no_row
      decision, after = decide(nil, :acquire, owner: 7)
      assert_equal Decision.new(status: :granted, lease: Lease.exact(owner: 7, token: 1, expires_at_ns: 15 * SECOND)),
                   decision
      assert_equal ["1", "7", "1", (15 * SECOND).to_s, (10 * SECOND).to_s], after
    end

    def test_the_same_rules_as_an_authority_on_the_nanosecond_timeline
      row = ["3", "7", "3", (15 * SECOND).to_s, (10 * SECOND).to_s]
      # A refusal within the lease's life writes nothing (the core's must_store) ...
      assert_equal [Decision.rejected(:occupied), nil], decide(row, :acquire, owner: 8, now: 12 * SECOND)
      # ... one at or past its deadline writes the instant that saw it expire.
      assert_equal [Decision.rejected(:stale_token), ["3", "7", "3", (15 * SECOND).to_s, (15 * SECOND).to_s]],
                   decide(row, :renew, owner: 8, token: 2, now: 15 * SECOND, ttl: 1)
      renewed, after = decide(row, :renew, owner: 7, token: 3, now: 11 * SECOND, ttl: 9)
      assert_predicate renewed, :renewed?
      assert_equal 20 * SECOND, renewed.lease.expires_at_ns
      assert_equal ["3", "7", "3", (20 * SECOND).to_s, (11 * SECOND).to_s], after
      rotated, after = decide(row, :reacquire, owner: 7, now: 11 * SECOND)
      assert_equal 4, rotated.lease.token
      assert_equal "4", after.first
      assert_same Decision::RELEASED, decide(row, :release, owner: 7, token: 3, now: 11 * SECOND).first
      assert_equal ["3", nil, nil, nil, (11 * SECOND).to_s], decide(row, :release, owner: 7, token: 3, now: 11 * SECOND).last
      assert_equal Decision.rejected(:stale_token), decide(row, :renew, owner: 7, token: 0).first
    end

    def test_the_clock_is_clamped_and_an_unchanged_row_is_not_written
      row = ["3", "7", "3", (15 * SECOND).to_s, (10 * SECOND).to_s]
      assert_equal [Decision.rejected(:occupied), nil], decide(row, :acquire, owner: 8, now: 10 * SECOND)
      # An instant before the observed one is evaluated at the observed one.
      assert_equal [Decision.rejected(:occupied), nil], decide(row, :acquire, owner: 8, now: 1)
      assert_nil decide(nil, :release, owner: 1, token: 1, now: 0).last, "nothing to write for an unused resource"
    end

    def test_a_request_with_its_own_now_ignores_the_store_clock
      decision, after = request(:acquire, owner: 7, now: 12, ttl: 0.5).decide("res", nil, 99 * SECOND, :sequence)
      assert_equal 12_500_000_000, decision.lease.expires_at_ns
      assert_equal (12 * SECOND).to_s, after.last
      # The store clock is not even read.
      assert_predicate request(:acquire, now: 12.25).decide("res", nil, nil, :sequence).first, :granted?
      # A Float rounds to the nearest nanosecond, as everywhere in the gem.
      assert_equal "1", request(:acquire, now: 1e-9).decide("res", nil, nil, :sequence).last.last
    end

    # The store's token policy: :clock_floor raises a grant's token to the
    # evaluated instant in µs (the core's TokenFloor::ClockMicros); only a
    # grant's token changes. Anything else is refused before the row is read.
    def test_the_token_policy_floors_a_grant_at_the_evaluated_instant_in_microseconds
      row = %w[41 7 41 100 50] # token 41, held by 7 until 100 ns: expired
      sequence, floored = %i[sequence clock_floor].map do |tokens|
        request(:acquire, owner: 8, ttl: 1).decide("res", row, 12_345_678_901, tokens)
      end
      assert_equal 42, sequence.first.lease.token
      assert_equal 12_345_678, floored.first.lease.token
      assert_equal sequence.last.values_at(1, 3, 4), floored.last.values_at(1, 3, 4)
      assert_equal %w[12345678 12345678], floored.last.values_at(0, 2)
      # A renewal keeps its token whatever the policy.
      renewed = request(:renew, owner: 7, token: 41).decide("res", %w[41 7 41 100000000000 50], 99, :clock_floor)
      assert_equal 41, renewed.first.lease.token

      [:fast, "sequence", nil, 0, :"sequence\x00"].each do |bad|
        error = assert_raises(ArgumentError) { request(:acquire).decide("res", :not_a_row, 0, bad) }
        assert_equal "tokens must be :sequence or :clock_floor, got #{bad.inspect}", error.message
      end
      assert_same :clock_floor, Native.token_policy(:clock_floor)
      assert_raises(ArgumentError) { Native.token_policy("clock_floor") }
    end

    def test_the_whole_u64_range_round_trips_exactly
      row = [U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, (U64_MAX - 1).to_s, (U64_MAX - 2).to_s]
      decision, after = decide(row, :renew, owner: U64_MAX, token: U64_MAX, now: U64_MAX - 2, ttl: 2e-9)
      assert_equal Lease.exact(owner: U64_MAX, token: U64_MAX, expires_at_ns: U64_MAX), decision.lease
      assert_equal [U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, U64_MAX.to_s, (U64_MAX - 2).to_s], after
      # A deadline past 2**64-1 ns does not fit the row: the store's horizon.
      assert_equal Decision.rejected(:deadline_overflow),
                   decide(row, :renew, owner: U64_MAX, token: U64_MAX, now: U64_MAX - 2, ttl: 3e-9).first
      assert_equal Decision.rejected(:deadline_overflow),
                   decide([nil, nil, nil, nil, "0"], :acquire, now: U64_MAX, ttl: 1e-9).first
      granted, after = decide([nil, nil, nil, nil, "0"], :acquire, now: U64_MAX - 1, ttl: 1e-9)
      assert_equal U64_MAX, granted.lease.expires_at_ns
      assert_equal ["1", "1", "1", U64_MAX.to_s, (U64_MAX - 1).to_s], after
      assert_equal Decision.rejected(:tokens_exhausted),
                   decide([U64_MAX.to_s, nil, nil, nil, "0"], :acquire, now: 0).first
    end

    BAD_ROWS = {
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
      ["5", nil, nil, nil] => /got \["5", nil, nil, nil\]/,
      "5" => /got "5"/
    }.freeze

    def test_a_row_no_history_can_produce_is_a_store_error
      assert_equal 16, BAD_ROWS.size
      BAD_ROWS.each do |columns, message|
        [-> { decide(columns, :acquire) }, -> { Native.row_checkpoint("res", columns) }].each do |call|
          error = assert_raises(StoreError, columns.inspect) { call.call }
          assert_match(/\Athe stored row for resource "res" is not a valid checkpoint: /, error.message)
          assert_match message, error.message
        end
      end
    end

    def test_the_problems_are_named_in_the_stores_columns_exactly
      {
        ["5", "1", nil, "10", "0"] =>
          "a lease record needs lease_owner, lease_token and lease_expires_at_ns, all or none",
        %w[5 1 6 10 0] => "the lease's token was never issued (lease_token > last_issued, or no last_issued)",
        ["5", nil, nil, nil, nil] => "observed_ns is nil",
        # The columns are read in order; a bad text comes before what it would mean.
        ["0", "x", nil, nil, nil] => 'lease_owner is "x"'
      }.each do |columns, problem|
        assert_error(StoreError, "the stored row for resource \"res\" is not a valid checkpoint: #{problem}") do
          decide(columns, :acquire)
        end
      end
      assert_error(StoreError, /\Athe stored row for resource :sym is not/) { Native.row_checkpoint(:sym, "5") }
    end

    def test_a_stored_row_reads_as_a_checkpoint_on_the_real_timeline
      lease = Lease.exact(owner: 7, token: 3, expires_at_ns: U64_MAX)
      checkpoint = Native.row_checkpoint("res", ["3", "7", "3", U64_MAX.to_s, (10 * SECOND).to_s])
      assert_equal Checkpoint.exact(last_issued: 3, lease: lease, observed_ns: 10 * SECOND), checkpoint
      assert_predicate checkpoint, :frozen?
      assert_equal Checkpoint.exact(last_issued: nil, lease: nil, observed_ns: 0), Native.row_checkpoint("res", nil)
    end

    def test_a_checkpoint_writes_as_its_columns_and_reads_back
      [
        ["3", "7", "3", U64_MAX.to_s, (10 * SECOND).to_s],
        [U64_MAX.to_s, "0", U64_MAX.to_s, "0", U64_MAX.to_s],
        [U64_MAX.to_s, nil, nil, nil, "0"],
        [nil, nil, nil, nil, "0"]
      ].each do |row|
        columns = Native.row_columns(Native.row_checkpoint("res", row))
        assert_equal row, columns
        assert(columns.compact.all?(String))
      end
      assert_equal [nil, nil, nil, nil, "0"], Native.row_columns(Authority.new.checkpoint)
      assert_equal %w[1 7 1 1500000000 1000000000],
                   Native.row_columns(granted_authority(owner: 7, now: 1, ttl: 0.5).checkpoint)
      assert_error(TypeError, 'checkpoint must be a LeaseMachines::Checkpoint, got "3"') { Native.row_columns("3") }
    end

    def test_arguments_are_converted_strictly
      assert_raises(RangeError) { decide(nil, :acquire, owner: -1) }
      assert_raises(TypeError) { decide(nil, :acquire, owner: 1.0) }
      assert_raises(TypeError) { decide(nil, :renew, token: nil) }
      assert_raises(TypeError) { decide(nil, :acquire, ttl: nil) }
      assert_raises(TypeError) { decide(nil, :acquire, ttl: "5") }
      assert_raises(TypeError) { request(:acquire, now: 5r) }
      assert_raises(ArgumentError) { decide(nil, :acquire, ttl: -1) }
      assert_error(RangeError, "clock_ns must be an Integer in #{OWNER_RANGE}, got #{2**64}") do
        decide(nil, :acquire, now: 2**64)
      end
      assert_error(TypeError, "clock_ns must be an Integer in #{OWNER_RANGE}, got 1.0 (Float)") do
        decide(nil, :acquire, now: 1.0)
      end
      assert_predicate decide(nil, :release, token: 1, ttl: nil).first, :rejected?, "release takes no ttl"
    end

    def test_times_must_fit_the_stores_timeline
      assert_predicate request(:acquire, now: 18_446_744_073, ttl: 0.709551615).decide("res", nil, 0, :sequence).first, :granted?
      { now: [18_446_744_074, 18_446_744_073.71, 2**63], ttl: [18_446_744_074, 1e15] }.each do |name, values|
        values.each do |value|
          message = "#{name} is too large for a store #{STORE_RANGE}, got #{value.inspect}"
          assert_error(ArgumentError, message) { request(:renew, token: 1, name => value) }
        end
      end
      # Past what any Duration holds, the gem's usual message.
      assert_error(ArgumentError, /\Anow is too large to represent/) { request(:acquire, now: 2**64) }
    end

    def test_each_request_checks_its_arguments_in_the_authoritys_order_with_its_messages
      authority = Authority.new
      cases = {
        acquire: [[-1, -1, nil], [1, -1, nil], [1, 1, nil], [1.0, nil, 5], [1, "1", 5]],
        reacquire: [[nil, 1, 1], [1, Object.new, 1], [1, 1, -0.5]],
        renew: [[-1, nil, -1, nil], [1, nil, -1, nil], [1, 0, -1, nil], [1, 0, 1, nil], [1, 2**64, 1, 1]],
        release: [[2**64, nil, nil], [1, 1.5, nil], [1, 1, Float::NAN]]
      }
      cases.each do |kind, argument_lists|
        argument_lists.each do |arguments|
          # The authority's native method behind its keywords (outside the
          # typed API, so the file stays well-typed for rake rbs:test).
          expected = assert_raises(StandardError) { authority.__send__(:"_#{kind}", *arguments) }
          assert_error(expected.class, expected.message) { Native::Request.public_send(kind, *arguments) }
        end
      end
    end

    def test_a_request_is_frozen_immutable_and_made_only_by_its_constructors
      request = request(:renew, owner: 7, token: 3, ttl: 9)
      assert_predicate request, :frozen?
      assert_instance_of Native::Request, request
      assert_error(TypeError, "allocator undefined for LeaseMachines::Native::Request") { Native::Request.new }
      assert_raises(TypeError) { Native::Request.allocate }
      assert_raises(FrozenError) { request.instance_variable_set(:@now, 1) }
      assert_empty Native::Request.instance_methods(false) - %i[decide grant? on_contention]
    end

    def test_a_request_decides_again_the_same_way_for_a_retry
      request = request(:renew, owner: 7, token: 3, ttl: 9)
      row = ["3", "7", "3", (15 * SECOND).to_s, (10 * SECOND).to_s]
      first = request.decide("res", row, 11 * SECOND, :sequence)
      assert_equal first, request.decide("res", row, 11 * SECOND, :sequence)
      moved = ["3", "7", "3", (20 * SECOND).to_s, (11 * SECOND).to_s]
      assert_equal [Decision.new(status: :renewed, lease: Lease.exact(owner: 7, token: 3, expires_at_ns: 21 * SECOND)),
                    ["3", "7", "3", (21 * SECOND).to_s, (12 * SECOND).to_s]],
                   request.decide("res", moved, 12 * SECOND, :sequence)
    end
  end
end
