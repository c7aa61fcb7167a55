# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # The elector on a Memory store and a manual clock (lease_duration 15,
  # renew_deadline 10, retry_period 2).
  class ElectorTest < Minitest::Test
    include RuntimeHelper

    def setup
      super
      @terms = Queue.new
    end

    def elector(owner, **options)
      Elector.new(authority, owner: owner, clock: @clock, on_elected: ->(term) { @terms << [owner, :elected, term] },
                             on_deposed: ->(term) { @terms << [owner, :deposed, term] }, **options)
    end

    # Advances the manual clock by 0.1 s at a time, `seconds` in all at
    # most, until an elector reports a term. One step of `seconds` could be
    # taken before the elector had begun its wait, which would then wait for
    # a clock that never moves again (it hung a fresh-clone run of rbs:test once).
    def next_term_within(seconds)
      (seconds / 0.1).round.times do
        return @terms.pop unless @terms.empty?

        @clock.advance(0.1)
        sleep 0.01
      end
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      sleep 0.01 while @terms.empty? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      refute_empty @terms, "no term within #{seconds} s of the clock"
      @terms.pop
    end

    def test_timings_are_validated_as_client_go_does
      {
        { lease_duration: 10, renew_deadline: 10 } => "lease_duration (10) must be greater than renew_deadline (10)",
        { renew_deadline: 2.4, retry_period: 2 } => "renew_deadline (2.4) must be greater than 1.2 * retry_period (2)",
        { retry_period: 0 } => "retry_period must be a positive, finite number of seconds, got 0",
        { lease_duration: Float::INFINITY } => "lease_duration must be a positive, finite number of seconds, got Infinity"
      }.each do |timings, message|
        error = assert_raises(ArgumentError) { elector(1, **timings) }
        assert_equal message, error.message
      end
    end

    def test_one_leader_keeps_its_term_and_stop_hands_over_at_once
      first = elector(1).start
      assert_equal [1, :elected, 1], @terms.pop
      assert_predicate first, :leader?
      assert_equal 1, first.term
      second = elector(2).start
      6.times { @clock.advance(2) } # renewals every 2 s; the second keeps trying
      assert_predicate first, :leader?
      refute_predicate second, :leader?
      assert_equal 1, authority.checkpoint.lease.token

      first.stop
      assert_equal [1, :deposed, 1], @terms.pop
      assert_nil authority.checkpoint.lease, "stop released"
      refute_predicate first, :leader?
      assert_equal [2, :elected, 2], next_term_within(2.4), "the second's next try, within 1.2 * retry_period"
      assert_predicate second, :leader?
    ensure
      first&.stop
      second&.stop
    end

    def test_a_leader_at_risk_steps_down_before_its_lease_can_run_out
      leader = elector(1).start
      assert_equal [1, :elected, 1], @terms.pop
      fail_next(1_000)
      5.times { @clock.advance(1) } # the renewal at 1002 and every retry fail
      assert_predicate leader, :leader?
      warning = capture_log do
        5.times { @clock.advance(1) } # 1010: renew_deadline passed
        assert_equal [1, :deposed, 1], @terms.pop
        sleep 0.01 until @events.any? { |name, _| name == :release }
      end
      assert_match(/releasing "nightly" \(token 1\) failed/, warning, "stepping down tries to release")
      refute_predicate leader, :leader?
      assert_operator authority.checkpoint.lease.expires_at, :>, @clock.now, "stepped down with time to spare"
      @store_failures.clear
      @clock.advance(5) # the unreleased lease runs out at 1015
      assert_equal [1, :elected, 2], next_term_within(2.4), "a new term, a new token"
    ensure
      leader&.stop
    end

    def test_a_forced_release_deposes_the_leader
      leader = elector(1).start
      assert_equal [1, :elected, 1], @terms.pop
      @store.force_release("nightly")
      @clock.advance(2)
      assert_equal [1, :deposed, 1], @terms.pop
      assert_equal [1, :elected, 2], next_term_within(2.4)
    ensure
      leader&.stop
    end
  end
end
