# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Objects survive garbage collection and heap compaction: the extension
  # keeps the classes and shared decisions it holds alive and where they are.
  class GcTest < Minitest::Test
    def build
      authority = Authority.new
      granted = authority.acquire(owner: 7, now: 1.5, ttl: 30)
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      {
        authority: authority,
        granted: granted,
        checkpoint: authority.checkpoint,
        fence: Fence.new(highest: 1),
        cadence: cadence,
        holder: Holder.new(token: 1, at: 1.5, cadence: cadence)
      }
    end

    def assert_everything_still_works(objects)
      authority = objects.fetch(:authority)

      assert_equal Lease.new(owner: 7, token: 1, expires_at: 31.5), objects.fetch(:granted).lease
      assert_equal objects.fetch(:checkpoint), authority.checkpoint
      assert_same Decision.rejected(:occupied), authority.acquire(owner: 8, now: 2, ttl: 1)
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: 2, now: 2, ttl: 1)
      renewed = authority.renew(owner: 7, token: 1, now: 3, ttl: 60)

      assert_instance_of Decision, renewed
      assert_instance_of Lease, renewed.lease
      assert_same Decision::RELEASED, authority.release(owner: 7, token: 1, now: 4)
      assert_equal 2, authority.acquire(owner: 8, now: 5, ttl: 1).lease.token
      assert_instance_of Checkpoint, Authority.restore(objects.fetch(:checkpoint)).checkpoint
      assert objects.fetch(:fence).accept(2)
      refute objects.fetch(:fence).accept(1)
      assert_equal 30.0, objects.fetch(:cadence).ttl
      assert_equal 26.5, objects.fetch(:holder).warning_deadline
      assert_same objects.fetch(:cadence), objects.fetch(:holder).cadence
      assert objects.fetch(:holder).fence
    end

    def test_objects_survive_compaction
      objects = build
      compact_heap

      assert_everything_still_works(objects)
    end

    def test_objects_survive_compaction_between_calls
      authority = Authority.new
      tokens = Array.new(iterations(8, floor: 2)) do |step|
        compact_heap
        decision = authority.acquire(owner: step, now: step * 2, ttl: 1)
        compact_heap
        assert_same Decision::RELEASED, authority.release(owner: step, token: decision.lease.token, now: (step * 2) + 0.5)
        decision.lease.token
      end

      assert_equal (1..tokens.size).to_a, tokens
    end

    def test_objects_survive_full_collections_of_their_garbage
      objects = build
      iterations(20_000).times { |step| Authority.new.acquire(owner: step, now: step, ttl: 1) }
      GC.start(full_mark: true, immediate_sweep: true)

      assert_everything_still_works(objects)
    end

    def test_shared_decisions_are_the_constants_after_collection_and_compaction
      GC.start
      compact_heap
      authority = granted_authority

      assert_same Decision::REJECTIONS.fetch(0), authority.acquire(owner: 1, now: 11, ttl: 1)
      assert_same Decision::RELEASED, authority.release(owner: 7, token: 1, now: 11)
      assert_equal Decision::REASONS, Decision::REJECTIONS.map(&:reason)
    end
  end
end
