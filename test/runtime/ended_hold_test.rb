# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # A Held kept after its hold ended (returned from the block, stored by a
  # job, read by another thread) holds nothing: it reads `:released`, and
  # `check!` raises, whoever holds the lease now. A Held lost before its hold
  # ended keeps saying how it was lost.
  class EndedHoldTest < Minitest::Test
    include RuntimeHelper

    def test_a_held_whose_hold_ended_holds_nothing_once_another_owner_took_the_lease
      held = hold { |h| h }.value
      assert_predicate authority.acquire(owner: 12, ttl: TTL), :granted?
      assert_released held
    end

    def test_it_holds_nothing_even_while_the_lease_is_free
      held = hold { |h| h }.value
      assert_nil authority.checkpoint.lease
      assert_released held
      @clock.advance(60)
      assert_released held, "and so it stays"
    end

    def test_it_holds_nothing_when_its_release_failed
      held = nil
      capture_log { held = hold { |h| fail_next(1) && h }.value }
      assert_equal [:failed], events(:release, :status)
      assert_released held
    end

    def test_a_held_lost_before_its_hold_ended_keeps_its_loss
      held = hold do |h|
        @store.force_release("nightly")
        @clock.advance(10) # the renewal is refused
        h
      end.value
      assert_equal %i[expired stale_token], [held.state, held.reason]
      error = assert_raises(LeaseLost) { held.check! }
      assert_equal %i[expired stale_token], [error.state, error.reason]
    end

    def test_the_threads_of_the_block_see_the_end_too
      seen = Queue.new
      go = Queue.new
      worker = nil
      hold do |held|
        worker = Thread.new do
          seen << held.check!.state
          go.pop # the hold ends meanwhile
          begin
            held.check!
            seen << :still_held
          rescue LeaseLost => e
            seen << e.state
          end
        end
        assert_equal :confirmed, seen.pop
      end
      go << true
      worker.join(5)
      assert_equal :released, seen.pop
    end

    private

    def assert_released(held, message = nil)
      assert_equal %i[released released], [held.state, held.reason], message
      assert_predicate held, :lost?, message
      assert_predicate held, :at_risk?, message
      assert_in_delta 0.0, held.remaining, 0.0, message
      error = assert_raises(LeaseLost) { held.check! }
      assert_equal %i[released released], [error.state, error.reason], message
      assert_equal "lease on \"nightly\" with token #{held.token} is released (released)", error.message
      assert_equal [], events(:lost), "an ended hold is not a lost lease"
    end
  end
end
