# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # The fence: refuses any token lower than the highest it accepted.
  class FenceTest < Minitest::Test
    def test_a_new_fence_has_seen_nothing_and_accepts_any_issued_token
      fence = Fence.new

      assert_nil fence.highest
      assert fence.accept(5)
      assert_equal 5, fence.highest
    end

    def test_equal_tokens_pass_greater_tokens_raise_the_mark_lower_ones_are_refused
      fence = Fence.new

      assert fence.accept(1)
      assert fence.accept(1)
      assert fence.accept(3)
      refute fence.accept(2)
      refute fence.accept(1)
      assert_equal 3, fence.highest
      assert fence.accept(3)
    end

    def test_token_zero_was_never_issued_and_is_never_accepted
      fresh = Fence.new

      refute fresh.accept(0)
      assert_nil fresh.highest
      seen = Fence.new(highest: 1)

      refute seen.accept(0)
      assert_equal 1, seen.highest
    end

    def test_a_fence_starts_from_a_stored_mark
      fence = Fence.new(highest: 7)

      assert_equal 7, fence.highest
      refute fence.accept(6)
      assert fence.accept(7)
      assert Fence.new(highest: nil).accept(1)
    end

    def test_the_largest_token_is_a_mark_like_any_other
      fence = Fence.new(highest: U64_MAX - 1)

      assert fence.accept(U64_MAX)
      refute fence.accept(U64_MAX - 1)
      assert_equal U64_MAX, fence.highest
    end

    def test_the_fence_turns_away_the_stalled_worker
      authority = Authority.new
      fence = Fence.new
      stalled = authority.acquire(owner: 7, now: 0, ttl: 10).lease

      assert fence.accept(stalled.token)
      successor = authority.acquire(owner: 12, now: 15, ttl: 10).lease

      assert fence.accept(successor.token)
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: stalled.token, now: 16, ttl: 10)
      refute fence.accept(stalled.token)
      assert_equal successor.token, fence.highest
    end

    def test_inspect
      assert_equal "#<LeaseMachines::Fence highest=nil>", Fence.new.inspect
      assert_equal "#<LeaseMachines::Fence highest=4>", Fence.new(highest: 4).to_s
    end
  end
end
