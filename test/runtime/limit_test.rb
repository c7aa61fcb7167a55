# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # `hold(limit: N)` on a Memory store and a manual clock: N slot leases,
  # each an ordinary resource with its own tokens (docs/RUNTIME.md,
  # "Concurrency limits").
  class LimitTest < Minitest::Test
    include RuntimeHelper

    # Holds in threads until #release_all; returns each Held (nil: not held).
    def hold_in_threads(count, name = "nightly", **options)
      @releases = Queue.new
      @threads = []
      count.times.map do |owner|
        inside = Queue.new
        @threads << Thread.new do
          outcome = authority(name).hold(owner: owner + 1, ttl: TTL, clock: @clock, **options) do |held|
            inside << held
            @releases.pop
          end
          inside << nil unless outcome.held?
        rescue StandardError => e
          inside << e
        end
        inside.pop.tap { |held| raise held if held.is_a?(Exception) }
      end
    end

    # A holder of one slot in a thread: [its slot, the queue that ends it, the
    # thread]. Fails, rather than waiting forever, when it finds every slot held.
    def slot_holder(owner)
      gate = Queue.new
      slot = Queue.new
      thread = Thread.new do
        outcome = authority("nightly").hold(owner: owner, ttl: TTL, clock: @clock, limit: 3) do |held|
          slot << held.slot
          gate.pop
        end
        slot << outcome.decision unless outcome.held?
      rescue StandardError => e
        slot << e
      end
      taken = slot.pop
      raise taken if taken.is_a?(Exception)

      assert_kind_of Integer, taken, "owner #{owner} was refused a slot: #{taken.inspect}"
      [taken, gate, thread]
    end

    def release_all
      return unless @threads

      @threads.size.times { @releases << true }
      @threads.each { |thread| thread.join(5) }
    end

    def test_n_holders_hold_n_distinct_slots_and_the_next_is_refused
      helds = hold_in_threads(4, limit: 3)
      granted = helds.compact
      assert_equal 3, granted.size, "three of the four hold"
      assert_nil helds.last, "the fourth found every slot held"
      assert_equal [0, 1, 2], granted.map(&:slot).sort
      assert_equal %w[nightly#slot-0 nightly#slot-1 nightly#slot-2], granted.map(&:resource).sort
      assert_equal [1, 1, 1], granted.map(&:token), "each slot has a token sequence of its own"
      granted.each { |held| assert_equal held.owner, authority(held.resource).checkpoint.lease.owner }
      assert_nil authority("nightly").checkpoint.lease, "the limited resource's own name is no slot"
    ensure
      release_all
    end

    def test_a_released_slot_is_taken_again_with_the_next_token
      hold_in_threads(3, limit: 3)
      release_all
      tokens = Array.new(3) { |index| authority("nightly#slot-#{index}").checkpoint.last_issued }
      assert_equal [1, 1, 1], tokens
      helds = hold_in_threads(3, limit: 3)
      assert_equal [2, 2, 2], helds.map(&:token), "every slot's next grant fences its earlier holder"
    ensure
      release_all
    end

    def test_all_slots_held_answers_occupied_and_hold_bang_names_the_resource
      hold_in_threads(2, limit: 2)
      outcome = hold(limit: 2) { flunk "no slot is free" }
      refute_predicate outcome, :held?
      assert_equal :occupied, outcome.decision.reason
      error = assert_raises(Occupied) { authority.hold!(owner: 9, ttl: TTL, clock: @clock, limit: 2) { nil } }
      assert_equal "nightly", error.resource
    ensure
      release_all
    end

    def test_a_waiter_takes_the_first_slot_released
      hold_in_threads(2, limit: 2)
      waiter = Thread.new { hold(limit: 2, wait: 60) { |held| [held.slot, held.token] } }
      sleep 0.05 until waiter.status == "sleep" || !waiter.alive?
      @clock.advance(0.5)
      @releases << true
      @clock.advance(5) while waiter.join(0.01).nil?
      assert_predicate waiter.value, :held?
      assert_equal 2, waiter.value.value.last, "the slot's second token"
    ensure
      release_all
    end

    # The waiter waits for all the slots at once (one await_handover of every
    # slot's name): whichever is released, it is granted with the clock
    # standing still (a wait on one slot would hear only that one).
    def test_a_waiter_hears_the_release_of_any_slot_at_once
      3.times do |released|
        holders = Array.new(3) { |owner| slot_holder(owner + 1) }
        waiter = Thread.new { hold(owner: 9, limit: 3, wait: 60, &:slot) }
        sleep 0.01 until waiter.status == "sleep" || !waiter.alive?
        holders.find { |(slot, _, _)| slot == released }[1] << true

        assert waiter.join(5), "slot #{released} released: the waiter was granted without the clock moving"
        assert_equal released, waiter.value.value
        # Every slot free again before the next round's holders take theirs: a
        # holder still releasing when they came refused one of them (CI hung).
        holders.each { |(_, gate, _)| gate << true }
        holders.each { |(_, _, thread)| assert thread.join(5), "a holder ended" } # rubocop:disable Style/CombinableLoops -- every gate opens before any join
      end
    end

    def test_limit_one_is_the_resource_itself_so_it_and_a_plain_hold_exclude_each_other
      in_hold("nightly", limit: 1) do |held|
        assert_equal "nightly", held.resource
        assert_equal 0, held.slot
        refute_predicate hold("nightly") { nil }, :held?
      end
      in_hold("nightly") do |held|
        assert_equal 0, held.slot
        refute_predicate hold("nightly", limit: 1) { nil }, :held?
      end
      assert_equal 2, authority.checkpoint.last_issued, "one token sequence"
    end

    def test_attempts_start_at_a_random_slot
      slots = Array.new(40) { hold(limit: 4, &:slot).value }
      assert_operator slots.uniq.size, :>, 1, "waiters spread over the slots (#{slots.tally})"
    end

    def test_bad_limits_are_refused_naming_limit_and_the_value
      # (Not Integers: test/runtime/limit_arguments_test.rb, ill-typed on purpose.)
      [[0, ArgumentError], [-1, ArgumentError], [257, ArgumentError]].each do |limit, error|
        raised = assert_raises(error, limit.inspect) { hold(limit: limit) { flunk "not run" } }
        assert_match(/\Alimit must be an Integer from 1 to 256 .*got #{Regexp.escape(limit.inspect)}/, raised.message)
      end
      assert_nil authority.checkpoint.lease
    end

    def test_an_in_memory_authority_refuses_a_limit_above_one
      memory = Authority.new
      error = assert_raises(ArgumentError) { memory.hold(owner: 1, ttl: 30, limit: 2) { flunk "not run" } }
      assert_match(/limit: 2 .*store's authority/, error.message)
      assert_equal 1, memory.hold(owner: 1, ttl: 30, limit: 1, &:token).value
    end

    def test_a_slot_name_past_the_longest_resource_name_is_refused
      name = "n" * 250
      assert_raises(ArgumentError) { hold(name, limit: 2) { flunk "not run" } }
      assert_predicate hold(name, limit: 1) { nil }, :held?
    end
  end
end
