# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # `hold` on a Memory store and a manual clock: every state change, without
  # sleeping (renew_after 10, warning deadline 22.5, ttl 30 by default).
  class HoldTest < Minitest::Test
    include RuntimeHelper

    def test_the_block_runs_under_a_lease_that_is_released_afterwards
      outcome = hold do |held|
        assert_equal 1, held.token
        assert_equal :confirmed, held.state
        assert_equal 30.0, held.remaining
        refute_predicate held, :at_risk?
        assert_same held, held.check!
        assert_equal 7, authority.checkpoint.lease.owner
        :done
      end
      assert_predicate outcome, :held?
      assert_equal :done, outcome.value
      assert_equal 1, outcome.decision.lease.token
      assert_nil authority.checkpoint.lease, "released"
      assert_equal %i[acquire release], @events.map(&:first)
    end

    def test_renews_on_the_cadence_counting_from_when_each_request_was_sent
      in_hold do |held|
        @clock.advance(9.999)
        assert_equal 1030.0, authority.checkpoint.lease.expires_at, "not renewed before renew_after"
        @clock.advance(0.001)
        assert_equal 1040.0, authority.checkpoint.lease.expires_at, "renewed at 1010 for 30 s"
        assert_equal :confirmed, held.state
        assert_equal 1040.0, held.lease.expires_at
        assert_in_delta 30.0, held.remaining, 1e-9
        @clock.advance(10)
        assert_equal 1050.0, authority.checkpoint.lease.expires_at
        assert_equal [[:renewed, 0.0]] * 2, events(:renew, :status, :late)
      end
    end

    def test_the_cadence_can_be_set_and_is_checked
      in_hold(renew_after: 5, warn_before: 2) do |held|
        @clock.advance(4.999)
        assert_equal 1030.0, held.lease.expires_at
        @clock.advance(0.001)
        assert_equal 1035.0, authority.checkpoint.lease.expires_at
        fail_next(1_000)
        @clock.advance(27.999) # the renewals fail; the warning deadline is 1005 + 28
        refute_predicate held, :at_risk?
        @clock.advance(0.001)
        assert_predicate held, :at_risk?
        @store_failures.clear
      end
      error = assert_raises(ArgumentError) { hold(renew_after: 29, warn_before: 5) { flunk "ran" } }
      assert_match(/invalid cadence/, error.message)
      assert_nil authority.checkpoint.lease, "nothing was acquired"
    end

    def test_a_failing_store_is_retried_and_the_holder_recovers
      in_hold do |held|
        fail_next(3)
        @clock.advance(10) # the renewal fails
        assert_equal :unconfirmed, held.state
        @clock.advance(1) # retry after renew_after / 10 = 1 s: fails
        @clock.advance(1) # fails
        assert_equal :unconfirmed, held.state
        @clock.advance(1) # succeeds, sent at 1013
        assert_equal :confirmed, held.state
        assert_equal 1043.0, held.lease.expires_at
        assert_equal %i[failed failed failed renewed], events(:renew, :status)
        assert_equal %i[store_error] * 3, events(:renew, :reason).first(3)
      end
    end

    def test_a_store_failing_past_the_warning_deadline_puts_the_holder_at_risk_then_loses_it
      risks = Queue.new
      losses = Queue.new
      in_hold(on_at_risk: ->(h) { risks << h.state }, on_lost: ->(h) { losses << h.reason }) do |held|
        fail_next(1_000)
        @clock.advance(10)
        @clock.advance(12.499)
        refute_predicate held, :at_risk?
        @clock.advance(0.001) # 22.5 s after the last confirmed send
        assert_predicate held, :at_risk?
        error = assert_raises(LeaseLost) { held.check! }
        assert_equal :at_risk, error.state
        assert_equal :at_risk, risks.pop
        refute_predicate held, :lost?
        8.times { @clock.advance(1) } # retries every second, all failing; TTL passes at 1030
        assert_predicate held, :lost?
        assert_equal :ttl_elapsed, held.reason
        assert_equal :ttl_elapsed, losses.pop
        assert_equal 0.0, held.remaining
        assert_equal 1, events(:at_risk).size
        assert_equal [:ttl_elapsed], events(:lost, :reason)
        @store_failures.clear
      end
      assert_equal 1, authority.checkpoint.lease.token, "a lost lease is not released (it is not ours to release)"
    end

    def test_outcome_unknown_on_renewal_is_retried
      in_hold do |held|
        fail_next(1, OutcomeUnknownError.new("connection lost mid-commit"))
        @clock.advance(10)
        assert_equal :unconfirmed, held.state
        @clock.advance(1)
        assert_equal :confirmed, held.state
        assert_equal [:outcome_unknown, nil], events(:renew, :reason)
      end
    end

    def test_a_renewal_rejected_after_a_forced_release_loses_the_lease
      lost = Queue.new
      in_hold(on_lost: ->(h) { lost << h }) do |held, _thread|
        @store.force_release("nightly")
        @clock.advance(10)
        assert_same held, lost.pop
        assert_predicate held, :lost?
        assert_equal :expired, held.state
        assert_equal :stale_token, held.reason
        error = assert_raises(LeaseLost) { held.check! }
        assert_equal %i[expired stale_token], [error.state, error.reason]
        assert_equal [:stale_token], events(:lost, :reason)
      end
    end

    # The first thing a holder knows after a pause is that its time may have
    # run out: check! answers from its own clock, before the renewal answers.
    def test_after_a_pause_check_answers_at_once_from_the_holders_clock
      # "first" on a store of its own (the same hook): holds of one store due
      # together are renewed in one batch, and "nightly" must wait its turn.
      first_store = Stores::Memory.new(clock: @clock, before_commit: method(:hook))
      first_store.authority("first").hold(owner: 7, ttl: TTL, clock: @clock) do |first|
        in_hold do |held|
          close_gate
          @clock.advance(25, settle: false) # a pause past the warning deadline of both
          @entered.pop # the renewal thread is stuck renewing "first": "nightly" has heard nothing yet
          begin
            assert_equal :confirmed, held.state, "no renewal of it has started"
            assert_predicate held, :at_risk?
            error = assert_raises(LeaseLost) { held.check! }
            assert_equal :at_risk, error.state
            assert_in_delta 5.0, held.remaining, 1e-9
          ensure
            open_gate
          end
          Runtime::Scheduler.settle(@clock)
          assert_equal [:confirmed] * 2, [first.state, held.state], "the renewals sent at 1025 were confirmed"
          assert_same held, held.check!
        end
      end
    end

    def test_interrupt_raises_lease_lost_into_the_block
      started = Queue.new
      thread = Thread.new do
        hold(interrupt: true) do
          started << true
          sleep
        end
      end
      thread.report_on_exception = false
      started.pop
      @store.force_release("nightly")
      @clock.advance(10)
      error = assert_raises(LeaseLost) { thread.join(5) }
      assert_equal :stale_token, error.reason
    end

    # The lease is lost just after the block ended, while the hold is
    # releasing it: the interrupt is held back, and neither the block's value
    # nor its own error is replaced by it.
    def test_an_interrupt_after_the_block_ended_does_not_replace_its_outcome
      assert_equal :done, interrupted_after_the_block { :done }.value
      error = assert_raises(IOError) { interrupted_after_the_block { raise IOError, "the job failed" } }
      assert_equal "the job failed", error.message
    end

    def test_without_interrupt_the_block_finds_out_at_its_next_check
      in_hold do |held, thread|
        @store.force_release("nightly")
        @clock.advance(10)
        assert_predicate held, :lost?
        assert_predicate thread, :alive?, "nothing was raised into the block"
      end
    end

    # A fence that refuses the lease's token (a newer holder wrote) makes the
    # holder fenced: terminal, reported, and nothing more is renewed.
    def test_a_refused_fenced_write_fences_the_holder
      require "lease_machines/fences/sqlite"
      Dir.mktmpdir do |dir|
        fences = Fences::SQLite.new(File.join(dir, "data.sqlite3")).setup!
        fences.guard("nightly", 5) { nil } # a newer holder's write
        seen = nil
        assert_raises(FencedError) do
          hold do |held|
            seen = held
            fences.guard("nightly", held.token) { flunk "a stale write ran" }
          end
        end
        assert_equal %i[fenced fenced], [seen.state, seen.reason]
        assert_predicate seen, :lost?
        assert_equal [:fenced], events(:fenced, :status)
        assert_nil authority.checkpoint.lease, "released: the next holder may start at once"
        fences.close
      end
    end

    # A fence that saw the lease's token written by another owner (the store
    # issued it twice): fenced, with the reason :reissued in the events.
    def test_a_reissued_token_fences_the_holder_with_the_reason_reissued
      require "lease_machines/fences/sqlite"
      Dir.mktmpdir do |dir|
        fences = Fences::SQLite.new(File.join(dir, "data.sqlite3")).setup!
        fences.guard("nightly", 1, owner: 99) { nil } # the first holder of token 1, lost by a failover
        seen = nil
        assert_raises(ReissuedTokenError) do
          hold do |held|
            seen = held
            fences.guard("nightly", held.lease) { flunk "a reissued token's write ran" }
          end
        end
        assert_equal 1, seen.token
        assert_equal %i[fenced reissued], [seen.state, seen.reason]
        assert_equal [%i[fenced reissued]], events(:fenced, :status, :reason)
        assert_equal [:reissued], events(:lost, :reason)
        fences.close
      end
    end

    def test_nested_holds_of_two_resources_renew_on_one_thread
      hold("one") do |one|
        hold("two") do |two|
          scheduler = Runtime::Scheduler.for(@clock)
          assert_equal 2, scheduler.size
          renewals = scheduler.thread
          @clock.advance(10)
          assert_equal [1040.0, 1040.0], [one.lease.expires_at, two.lease.expires_at]
          assert_same renewals, scheduler.thread, "one thread renews both"
        end
        assert_nil @store.authority("two").checkpoint.lease
        assert_equal 1, Runtime::Scheduler.for(@clock).size
      end
      Runtime::Scheduler.settle(@clock)
      assert_nil Runtime::Scheduler.for(@clock).thread, "the thread ends when nothing is held"
    end

    def test_releases_on_an_exception_and_on_throw
      assert_raises(IOError) { hold { raise IOError, "the job failed" } }
      assert_nil authority.checkpoint.lease
      catch(:stop) { hold { throw :stop } }
      assert_nil authority.checkpoint.lease
      assert_equal 2, authority.checkpoint.last_issued
    end

    def test_a_failed_release_is_reported_and_never_hides_the_blocks_error
      error = nil
      warning = capture_log do
        error = assert_raises(IOError) do
          hold do
            @store.force_release("nightly")
            raise IOError, "the job failed"
          end
        end
      end
      assert_equal "the job failed", error.message
      assert_match(/releasing "nightly" \(token 1\) was refused: stale_token/, warning)
      assert_equal [%i[rejected stale_token]], events(:release, :status, :reason)

      warning = capture_log do
        assert_equal :ok, hold { fail_next(1) && :ok }.value
      end
      assert_match(/releasing "nightly" \(token 2\) failed: LeaseMachines::StoreError/, warning)
    end

    def test_an_occupied_resource_is_signalled_without_running_the_block
      authority.acquire(owner: 1, ttl: 60)
      outcome = hold { flunk "the block ran" }
      refute_predicate outcome, :held?
      assert_nil outcome.value
      assert_equal Decision.rejected(:occupied), outcome.decision
      error = assert_raises(Occupied) { authority.hold!(owner: 7, ttl: TTL, clock: @clock) { flunk "ran" } }
      assert_equal Decision.rejected(:occupied), error.decision
      assert_equal "nightly", error.resource
      assert_equal :value, authority("other").hold!(owner: 7, ttl: TTL, clock: @clock) { :value }
    end

    def test_a_waiting_hold_takes_over_on_the_release
      waiter = nil
      in_hold do |held, _thread|
        waiter = Thread.new { @store.authority("nightly").hold(owner: 8, ttl: TTL, wait: 60, clock: @clock, &:token) }
        Thread.pass until waiter.status == "sleep"
        assert_equal 1, held.token
      end
      outcome = waiter.value
      assert_predicate outcome, :held?, "taken on the handover, with no time passing on the clock"
      assert_equal 2, outcome.value
    end

    def test_waiting_ends_after_wait_seconds_on_the_clock
      authority.acquire(owner: 1, ttl: 600)
      waiter = Thread.new { hold(wait: 5) { flunk "ran" } }
      Thread.pass until waiter.status == "sleep"
      6.times do
        @clock.advance(1)
        Thread.pass
      end
      outcome = waiter.value
      refute_predicate outcome, :held?
      assert_operator events(:acquire).size, :>=, 2, "it tried more than once"
    end

    def test_store_errors_while_acquiring_are_retried_within_the_wait_and_raised_after
      fail_next(1)
      assert_raises(StoreError) { hold { flunk "ran" } }
      fail_next(1, OutcomeUnknownError.new("lost"))
      waiter = Thread.new { hold(wait: 5, &:token) }
      Thread.pass until waiter.status == "sleep" || !waiter.alive?
      @clock.advance(1)
      outcome = waiter.value
      assert_predicate outcome, :held?
      assert_equal 1, outcome.value, "after an unknown outcome the retry is a reacquire (granted here: nothing was committed)"
    end

    def test_a_forked_child_never_holds_its_parents_lease
      hold do |held|
        reader, writer = IO.pipe
        pid = fork do
          reader.close
          scheduler = Runtime::Scheduler.for(@clock)
          writer.puts [held.lost?, held.reason, held.at_risk?, scheduler.size].inspect
          writer.close
          exit!(0)
        end
        writer.close
        assert_equal "[true, :forked, true, 0]", reader.read.chomp
        Process.wait(pid)
        refute_predicate held, :lost?, "the parent still holds it"
      end
    end

    def test_the_in_memory_authority_holds_on_the_runtime_clock
      memory = Authority.new
      outcome = memory.hold(owner: 1, ttl: TTL, clock: @clock) do |held|
        @clock.advance(10)
        held.lease.expires_at
      end
      assert_equal 1040.0, outcome.value
      assert_nil memory.checkpoint.lease
    end

    private

    # Runs hold(interrupt: true) whose block ends (with `finish`) while a
    # renewal is stuck in the store; the renewal is then refused (the lease
    # was force-released), which interrupts the thread inside `finish`.
    def interrupted_after_the_block(&finish)
      inside = Queue.new
      go = Queue.new
      thread = Thread.new do
        hold(interrupt: true) do
          inside << true
          go.pop
          finish.call
        end
      end
      thread.report_on_exception = false
      inside.pop
      @store.force_release("nightly")
      close_gate
      @clock.advance(10, settle: false)
      @entered.pop # the renewal is in the store, holding the hold's renewal lock
      go << true
      # Ruby 3.4 names the frame "in 'LeaseMachines::Runtime::Held#finish'", earlier ones "in `finish'".
      Thread.pass until thread.backtrace.to_a.any? { |line| line.match?(/[`#]finish'\z/) } || !thread.alive?
      open_gate
      thread.value
    end
  end
end
