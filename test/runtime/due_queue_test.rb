# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # The scheduler's queue against a plain Hash scanned in full, on random
  # schedules, reschedules and removals.
  class DueQueueTest < Minitest::Test
    def test_first_is_always_the_earliest_current_entry
      rng = Random.new(14)
      queue = Runtime::DueQueue.new
      reference = {}.compare_by_identity
      holds = Array.new(40) { Object.new }
      3_000.times do |step|
        hold = holds.sample(random: rng)
        case rng.rand(4)
        when 0 then queue.delete(hold).then { reference.delete(hold) }
        when 1 then queue.set(hold, nil).then { reference.delete(hold) }
        else
          at = rng.rand(100).to_f
          queue.set(hold, at)
          reference[hold] = at
        end
        expected = reference.values.min
        expected.nil? ? assert_nil(queue.first, "step #{step}") : assert_equal(expected, queue.first.last, "step #{step}")
        assert_equal reference.size, queue.size
        now = rng.rand(100).to_f
        assert_equal reference.values.any? { |due| due <= now }, queue.due?(now)
      end
    end

    # Holds that come and go faster than they come due leave stale entries;
    # the queue is rebuilt before they pile up.
    def test_stale_entries_do_not_pile_up
      queue = Runtime::DueQueue.new
      kept = Object.new
      queue.set(kept, 5.0)
      10_000.times do |at|
        hold = Object.new
        queue.set(hold, 100.0 + at)
        queue.delete(hold)
      end
      assert_operator queue.entries, :<=, 2 + Runtime::DueQueue::COMPACT_SLACK
      assert_equal [kept, 5.0], queue.first
    end

    def test_an_empty_queue_has_nothing_due
      queue = Runtime::DueQueue.new
      assert_predicate queue, :empty?
      assert_nil queue.first
      refute queue.due?(1e9)
    end
  end
end
