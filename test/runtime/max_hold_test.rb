# frozen_string_literal: true

require_relative "runtime_helper"
require "active_support"
require "active_support/core_ext/integer/time"
require "tmpdir"

module LeaseMachines
  # `hold(max_hold:)`: renewals end once the hold has lasted max_hold since
  # its grant (the Holder decides, in the core); the lease then runs out at
  # its TTL and the holder is told as of any lost lease (`:max_hold`).
  class MaxHoldTest < Minitest::Test
    include RuntimeHelper

    def test_renewals_end_after_max_hold_and_the_lease_runs_out_at_its_ttl
      losses = Queue.new
      in_hold(max_hold: 45, on_lost: ->(h) { losses << h.reason }) do |held|
        4.times { @clock.advance(10) } # renewals at 10, 20, 30 and 40 s: before the end
        assert_equal 4, events(:renew).size
        assert_equal :confirmed, held.state
        @clock.advance(10) # 50 s: past max_hold, no renewal is sent
        assert_equal 4, events(:renew).size
        refute_predicate held, :lost?
        @clock.advance(19) # 69 s: the last renewal (40 s) still holds
        refute_predicate held, :lost?
        assert_equal [1, 7], [authority.checkpoint.lease.token, authority.checkpoint.lease.owner]
        @clock.advance(1) # 70 s: 40 + ttl, the lease ran out
        assert_predicate held, :lost?
        assert_equal %i[expired max_hold], [held.state, held.reason]
        error = assert_raises(LeaseLost) { held.check! }
        assert_equal :max_hold, error.reason
        assert_equal :max_hold, losses.pop
        assert_predicate authority.acquire(owner: 12, ttl: TTL), :granted?
      end
      assert_equal [:max_hold], events(:lost, :reason)
      assert_equal [], events(:release), "a lease that ran out is not released"
      assert_empty losses, "reported once"
    end

    def test_without_max_hold_the_same_hold_is_renewed_for_as_long_as_it_runs
      in_hold do |held|
        10.times { @clock.advance(10) }
        assert_equal 10, events(:renew).size
        assert_equal :confirmed, held.state
      end
    end

    def test_interrupt_raises_lease_lost_into_the_block
      error = assert_raises(LeaseLost) do
        hold(max_hold: 30, renew_after: 10, interrupt: true) do
          7.times { @clock.advance(10) }
          sleep 5
          flunk "not interrupted"
        end
      end
      assert_equal :max_hold, error.reason
    end

    def test_an_active_support_duration_is_its_seconds
      in_hold(max_hold: 1.minute) do |held|
        assert_equal 60.0, held.instance_variable_get(:@holder).cadence.max_hold
      end
    end

    def test_a_bad_max_hold_names_max_hold
      expected = {
        Float::NAN => [ArgumentError, "max_hold must be a finite, positive number of seconds, got NaN"],
        Float::INFINITY => [ArgumentError, "max_hold must be a finite, positive number of seconds, got Infinity"],
        -1 => [ArgumentError, "max_hold must be a finite, positive number of seconds, got -1"],
        0 => [ArgumentError, "max_hold must be a finite, positive number of seconds, got 0"],
        29 => [ArgumentError, "max_hold must be at least ttl (30), got 29"],
        29.5 => [ArgumentError, "max_hold must be at least ttl (30), got 29.5"],
        "60" => [TypeError, 'max_hold must be an Integer or Float number of seconds, got "60"'],
        -1.second => [ArgumentError, "max_hold must be a finite, positive number of seconds, got -1"]
      }
      raised = expected.to_h do |max_hold, _|
        error = assert_raises(StandardError, max_hold.inspect) { hold(max_hold: max_hold) { flunk "ran" } }
        [max_hold, [error.class, error.message]]
      end
      assert_equal expected, raised
      assert_nil authority.checkpoint.last_issued
      assert_predicate hold(max_hold: TTL) { nil }, :held?, "max_hold may equal ttl"
    end

    # Real time, a real SQLite file: the hold outlives max_hold, its lease
    # runs out a TTL after the last renewal and another owner gets it.
    def test_on_sqlite_in_real_time_the_runaway_hold_loses_its_lease
      Dir.mktmpdir("lease_machines_max_hold") do |dir|
        store = Stores::SQLite.new(File.join(dir, "leases.db")).setup!
        started = Runtime::MonotonicClock.now
        outcome = store.authority("runaway").hold(owner: 7, ttl: 0.4, max_hold: 0.6) do |held|
          sleep 0.01 until held.lost? || Runtime::MonotonicClock.now - started > 5
          [held.reason, Runtime::MonotonicClock.now - started,
           store.authority("runaway").acquire(owner: 12, ttl: 30).granted?]
        end
        reason, lasted, other_granted = outcome.value
        assert_equal :max_hold, reason
        assert_operator lasted, :>=, 0.6 + (0.4 / 3) # the last renewal was sent after ttl / 3
        assert_operator lasted, :<, 1.0 + 0.5
        assert other_granted, "the next owner takes the lease once it ran out"
      ensure
        store&.close
      end
    end
  end
end
