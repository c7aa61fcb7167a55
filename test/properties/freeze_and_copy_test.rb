# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # `freeze` makes every mutating call raise FrozenError while readers keep
  # working; `dup` and `clone` make independent copies.
  class FreezeAndCopyTest < Minitest::Test
    def cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)

    def test_a_frozen_authority_refuses_every_decision_and_keeps_its_state
      authority = granted_authority(owner: 7, now: 10, ttl: 5).freeze
      before = authority.checkpoint
      calls = {
        acquire: -> { authority.acquire(owner: 12, now: 20, ttl: 5) },
        reacquire: -> { authority.reacquire(owner: 7, now: 11, ttl: 5) },
        renew: -> { authority.renew(owner: 7, token: 1, now: 11, ttl: 5) },
        release: -> { authority.release(owner: 7, token: 1, now: 11) },
        rejected: -> { authority.acquire(owner: 12, now: 11, ttl: 5) },
        initialize: -> { authority.__send__(:initialize) },
        initialize_copy: -> { authority.__send__(:initialize_copy, Authority.new) }
      }
      calls.each do |name, call|
        error = assert_raises(FrozenError, name.to_s) { call.call }
        assert_match(/can't modify frozen LeaseMachines::Authority/, error.message)
      end

      assert_equal before, authority.checkpoint
      assert_equal :reject, authority.clock_policy
      assert_match(/\A#<LeaseMachines::Authority clock_policy=:reject last_issued=1 /, authority.inspect)
    end

    def test_a_frozen_fence_refuses_accept_and_keeps_its_mark
      fence = Fence.new(highest: 3).freeze

      [3, 4, 2, 0].each do |token|
        assert_raises(FrozenError) { fence.accept(token) }
      end
      assert_raises(FrozenError) { fence.__send__(:initialize, highest: nil) }
      assert_equal 3, fence.highest
      assert_equal "#<LeaseMachines::Fence highest=3>", fence.inspect
    end

    def test_a_frozen_holder_refuses_every_transition_and_keeps_its_readers
      holder = Holder.new(token: 2, at: 0, cadence: cadence).freeze
      transitions = {
        refresh: -> { holder.refresh(26) },
        confirm: -> { holder.confirm(token: 2, at: 1) },
        stale_confirm: -> { holder.confirm(token: 1, at: 1) },
        reacquire: -> { holder.reacquire(token: 3, at: 1) },
        expire: -> { holder.expire },
        fence: -> { holder.fence },
        initialize: -> { holder.__send__(:initialize, token: 9, at: 0, cadence: cadence) }
      }
      transitions.each do |name, call|
        assert_raises(FrozenError, name.to_s) { call.call }
      end

      assert_equal :confirmed, holder.state
      assert_equal 2, holder.token
      assert_equal 0.0, holder.confirmed_at
      assert_equal 25.0, holder.warning_deadline
      assert holder.renewal_due?(10)
      assert holder.at_risk?(25)
      refute holder.at_risk?(24)
      assert_equal cadence, holder.cadence
      assert_match(/state=:confirmed/, holder.inspect)
    end

    def test_a_cadence_is_frozen_from_birth
      value = cadence

      assert_predicate value, :frozen?
      assert_raises(FrozenError) { value.__send__(:initialize, ttl: 1, renew_after: 1, warn_before: 0) }
      assert_equal 30.0, value.ttl
    end

    def test_authority_copies_are_independent
      original = granted_authority(owner: 7, now: 10, ttl: 5, clock_policy: :clamp)
      snapshot = original.checkpoint

      [original.dup, original.clone].each do |copy|
        assert_equal snapshot, copy.checkpoint
        assert_equal :clamp, copy.clock_policy
        refute_predicate copy, :frozen?
        assert_predicate copy.release(owner: 7, token: 1, now: 11), :released?
        assert_equal 2, copy.acquire(owner: 12, now: 12, ttl: 5).lease.token
        assert_equal snapshot, original.checkpoint
      end
      assert_predicate original.renew(owner: 7, token: 1, now: 13, ttl: 5), :renewed?
    end

    def test_the_original_moving_on_does_not_move_a_copy
      original = granted_authority
      copy = original.dup
      snapshot = copy.checkpoint
      original.release(owner: 7, token: 1, now: 11)
      original.acquire(owner: 8, now: 12, ttl: 5)

      assert_equal snapshot, copy.checkpoint
    end

    def test_copies_of_a_frozen_authority
      frozen = granted_authority.freeze

      assert_predicate frozen.clone, :frozen?
      assert_raises(FrozenError) { frozen.clone.acquire(owner: 1, now: 20, ttl: 1) }
      thawed = frozen.clone(freeze: false)

      refute_predicate thawed, :frozen?
      assert_predicate thawed.acquire(owner: 1, now: 20, ttl: 1), :granted?
      duplicate = frozen.dup

      refute_predicate duplicate, :frozen?
      assert_predicate duplicate.acquire(owner: 1, now: 20, ttl: 1), :granted?
      assert_equal 1, frozen.checkpoint.last_issued
    end

    def test_fence_copies_are_independent
      original = Fence.new(highest: 3)

      [original.dup, original.clone].each do |copy|
        assert_equal 3, copy.highest
        assert copy.accept(9)
        assert_equal 9, copy.highest
        assert_equal 3, original.highest
      end
      assert original.accept(4)
      assert_predicate original.freeze.clone, :frozen?
      assert original.dup.accept(5)
    end

    def test_holder_copies_are_independent
      original = Holder.new(token: 2, at: 0, cadence: cadence)

      [original.dup, original.clone].each do |copy|
        assert_equal :confirmed, copy.state
        assert_equal 2, copy.token
        assert_same original.cadence, copy.cadence
        assert copy.fence
        assert_equal :fenced, copy.state
        assert_equal :confirmed, original.state
      end
      assert original.refresh(10)
      copy = original.dup

      assert original.confirm(token: 2, at: 11)
      assert_equal :unconfirmed, copy.state
      assert_equal 0.0, copy.confirmed_at
    end
  end
end
