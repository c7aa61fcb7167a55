# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # A lost lease is known as soon as the holder's clock says so, reported
  # exactly once (a `lost` event, `on_lost`), and never released: it is no
  # longer ours. The cases where the hold's own thread finds the loss before
  # the renewal thread does: right after a pause, when the block ends first,
  # when a fence refuses a lease that had already lapsed.
  class LossReportingTest < Minitest::Test
    include RuntimeHelper

    # A pause past the whole TTL (GC, SIGSTOP): the holder's first look at
    # its clock says the lease is gone, before any renewal was sent.
    def test_right_after_a_pause_past_the_ttl_the_held_reads_lost
      losses = Queue.new
      while_the_renewal_thread_is_busy_elsewhere do
        in_hold(on_lost: ->(h) { losses << [h.reason, Thread.current.name] }) do |held|
          @clock.advance(31, settle: false) # a pause past the whole TTL
          @entered.pop # the renewal thread is busy with "other": "nightly" has not been looked at
          assert_predicate held, :lost?
          assert_equal %i[expired ttl_elapsed], [held.state, held.reason]
          assert_in_delta 0.0, held.remaining, 0.0
          error = assert_raises(LeaseLost) { held.check! }
          assert_equal %i[expired ttl_elapsed], [error.state, error.reason]
          resume_renewals
          Runtime::Scheduler.settle(@clock)
          assert_equal [:ttl_elapsed, "lease_machines renewals"], losses.pop, "reported by the renewal thread"
          assert_equal %i[expired ttl_elapsed], [held.state, held.reason], "lost for good"
        end
      end
      assert_empty losses, "reported once"
      assert_equal [:ttl_elapsed], of_nightly(:lost, :reason)
      assert_equal [], of_nightly(:release, :status), "an expired lease is not released"
    end

    # The block ends before the renewal thread has looked: the hold itself
    # finds the TTL gone, reports the loss and releases nothing.
    def test_a_lease_that_ran_out_is_reported_lost_when_the_block_ends_before_the_renewal_thread_looks
      losses = Queue.new
      held = nil
      warnings = nil
      while_the_renewal_thread_is_busy_elsewhere do
        warnings = capture_log do
          held = hold(on_lost: ->(h) { losses << h.reason }) do |h|
            @clock.advance(31, settle: false) # a pause past the whole TTL
            @entered.pop # the renewal thread is busy with "other"
            h
          end.value
        end
        assert_equal %i[expired ttl_elapsed], [held.state, held.reason]
        assert_predicate held, :lost?
        assert_equal [:ttl_elapsed], events(:lost, :reason)
        assert_equal :ttl_elapsed, losses.pop
        assert_equal [], events(:release), "an expired lease is not released"
        assert_equal 1, authority.checkpoint.lease.token
        resume_renewals
      end
      assert_empty losses, "reported once"
      assert_equal [:ttl_elapsed], of_nightly(:lost, :reason)
      assert_equal "", warnings
    end

    # The lease lapsed (reported lost), a new holder took it and wrote; the
    # block's late write is refused. The holder becomes fenced, but the loss
    # was already reported, and the lease is not ours to release.
    def test_a_fence_refusing_a_lease_that_had_already_lapsed_reports_no_second_loss_and_releases_nothing
      with_fences do |fences|
        losses = Queue.new
        seen = nil
        warnings = capture_log do
          assert_raises(FencedError) do
            hold(on_lost: ->(h) { losses << [h.reason, Thread.current.name] }) do |held|
              seen = held
              fail_next(1_000)
              @clock.advance(31) # every renewal fails; the TTL passes
              @store_failures.clear
              newer = authority.acquire(owner: 12, ttl: TTL).lease.token
              fences.guard("nightly", newer) { nil }
              fences.guard("nightly", held.token) { flunk "a stale write ran" }
            end
          end
        end
        assert_equal [:ttl_elapsed, "lease_machines renewals"], losses.pop
        assert_empty losses, "on_lost ran once"
        assert_equal [:ttl_elapsed], events(:lost, :reason)
        assert_equal [:fenced], events(:fenced, :status)
        assert_equal %i[fenced ttl_elapsed], [seen.state, seen.reason]
        assert_equal [], events(:release), "an expired lease is not released"
        assert_equal "", warnings
        assert_equal [12, 2], [authority.checkpoint.lease.owner, authority.checkpoint.lease.token]
      end
    end

    # A fenced lease that is still live is released at the end, as before.
    def test_a_fence_refusing_a_live_lease_reports_one_loss_and_releases_it
      with_fences do |fences|
        fences.guard("nightly", 5) { nil }
        losses = Queue.new
        assert_raises(FencedError) do
          hold(on_lost: ->(h) { losses << h.reason }) { |held| fences.guard("nightly", held.token) { nil } }
        end
        assert_equal :fenced, losses.pop
        assert_empty losses
        assert_equal [:fenced], events(:lost, :reason)
        assert_equal [:released], events(:release, :status)
      end
    end

    private

    # A SQLite fence in a directory of its own (required here, as
    # hold_test.rb does: required first, fences/sqlite loads the stores
    # through a circular require).
    def with_fences
      require "lease_machines/fences/sqlite"
      Dir.mktmpdir do |dir|
        fences = Fences::SQLite.new(File.join(dir, "data.sqlite3")).setup!
        yield fences
      ensure
        fences&.close
      end
    end

    # One field of the events called `name` about "nightly".
    def of_nightly(name, field)
      events(name, :resource, field).filter_map { |resource, value| value if resource == "nightly" }
    end

    # Holds "other" (renewed every 10 s like "nightly", and added first, so
    # renewed first) and stops the renewal thread in a subscriber of the
    # event of its renewal of "other" (after the store call: the store is
    # free) until #resume_renewals: while the test's clock jumps, the
    # renewal thread has not looked at "nightly".
    def while_the_renewal_thread_is_busy_elsewhere
      @entered = Queue.new
      @resume = Queue.new
      stalled = false
      stall = LeaseMachines.subscribe do |name, payload|
        next unless name == :renew && payload[:resource] == "other" && !stalled

        stalled = true
        @entered << true
        @resume.pop
      end
      # On a store of its own: the holds of one store due together are renewed
      # in one batch, and "nightly" is to be looked at only after "other".
      other = Stores::Memory.new(clock: @clock).authority("other")
      other.hold(owner: 7, ttl: 300, renew_after: 10, clock: @clock) do
        yield
      ensure
        resume_renewals # before "other" is released: that waits for its renewal to end
      end
    ensure
      LeaseMachines.unsubscribe(stall)
    end

    def resume_renewals
      @resume << true if @resume.empty?
    end
  end
end
