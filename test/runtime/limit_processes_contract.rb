# frozen_string_literal: true

require_relative "../stores/store_helper"

module LeaseMachines
  # `hold(limit: N)` in real processes on a durable store: never more than
  # N hold at once, every slot's tokens increase, a killed holder's slot is
  # free after its TTL, and a limit of 1 is today's hold.
  module LimitProcessesContract
    include StoreTestHelper

    TTL = 0.6

    # 8 processes, 4 holds each, on a limit of 3. Each writes, inside its
    # block, its slot, token and the realtime instants it entered and left.
    def test_never_more_than_the_limit_hold_at_once_and_each_slots_tokens_increase
      name = unique_name("limited")
      log_dir = Dir.mktmpdir("lease_machines_limit")
      log = File.join(log_dir, "holds")
      pids = Array.new(8) do |owner|
        fork_child do
          store = new_store
          4.times do
            store.authority(name).hold!(owner: owner + 1, ttl: 5, wait: 30, limit: 3) do |held|
              entered = realtime_ns
              sleep 0.02 + (rand * 0.03)
              File.open(log, "a") { |file| file.puts([held.slot, held.token, held.resource, entered, realtime_ns].join(" ")) }
            end
          end
        end
      end
      pids.each { |pid| assert_child_succeeded(pid, timeout: 60) }
      holds = File.readlines(log).map(&:split).map do |slot, token, resource, *times|
        [slot.to_i, token.to_i, resource, *times.map(&:to_i)]
      end
      assert_equal 32, holds.size
      assert_operator most_at_once(holds), :<=, 3, "never more than the limit at once"
      assert_operator most_at_once(holds), :>=, 2, "the limit is not a mutex"
      assert_equal [0, 1, 2], holds.map(&:first).uniq.sort, "every slot was used"
      holds.each { |slot, _, resource| assert_equal "#{name}#slot-#{slot}", resource }
      holds.group_by(&:first).each do |slot, in_slot|
        tokens = in_slot.sort_by { |hold| hold[3] }.map { |hold| hold[1] }
        assert_equal tokens.sort.uniq, tokens, "slot #{slot}'s tokens strictly increase in the order it was held"
        assert_equal (1..tokens.size).to_a, tokens, "slot #{slot}: one token per grant"
        assert_equal tokens.last, new_store.authority("#{name}#slot-#{slot}").checkpoint.last_issued
      end
    ensure
      FileUtils.rm_rf(log_dir) if log_dir
    end

    def test_a_killed_holders_slot_is_free_after_its_ttl
      name = unique_name("killed")
      from_child, from_child_w = IO.pipe
      pid = fork_child do
        from_child.close
        new_store.authority(name).hold!(owner: 1, ttl: TTL, renew_after: 0.2, warn_before: 0.2, limit: 2) do |held|
          from_child_w.puts(held.slot)
          sleep 60
        end
      end
      from_child_w.close
      killed_slot = Integer(read_line(from_child))
      store = new_store
      other = store.authority("#{name}#slot-#{1 - killed_slot}").acquire(owner: 2, ttl: 30)
      assert_predicate other, :granted?, "the other slot was free"
      sleep 0.3 # renewed at least once
      Process.kill(:KILL, pid)
      killed_at = monotonic
      wait_child(pid)
      held = store.authority(name).hold(owner: 3, ttl: 5, wait: 5, limit: 2) { |h| [h.slot, h.token] }
      assert_predicate held, :held?
      assert_equal [killed_slot, 2], held.value, "the killed holder's slot, its next token"
      assert_operator monotonic - killed_at, :<=, TTL + 1.5, "free once its TTL ran out"
    ensure
      from_child&.close unless from_child&.closed?
    end

    def test_a_limit_one_holder_and_a_plain_holder_exclude_each_other
      name = unique_name("one")
      [{ limit: 1 }, {}].each do |child_options|
        from_child, from_child_w = IO.pipe
        to_child_r, to_child = IO.pipe
        pid = fork_child do
          from_child.close
          to_child.close
          new_store.authority(name).hold!(owner: 1, ttl: 5, **child_options) do |held|
            from_child_w.puts([held.resource, held.token].join(" "))
            to_child_r.gets
          end
        end
        from_child_w.close
        to_child_r.close
        resource, token = read_line(from_child).split
        assert_equal name, resource
        parent_options = child_options.empty? ? { limit: 1 } : {}
        refute_predicate new_store.authority(name).hold(owner: 2, ttl: 5, **parent_options) { nil }, :held?
        to_child.puts("done")
        assert_child_succeeded(pid)
        assert_equal child_options.empty? ? "2" : "1", token, "one token sequence for both"
      ensure
        [from_child, to_child].each { |io| io&.close unless io&.closed? }
      end
    end

    def test_bad_limits_are_refused_before_any_call
      name = unique_name("bad")
      [0, 1.5, "2", nil].each do |limit|
        assert_raises(ArgumentError, TypeError) { new_store.authority(name).hold(owner: 1, ttl: 5, limit: limit) { nil } }
      end
      assert_nil new_store.status(name)
    end

    private

    # The most holds whose [entered, left] intervals overlap at one instant.
    def most_at_once(holds)
      edges = holds.flat_map { |hold| [[hold[3], 1], [hold[4], -1]] }.sort_by { |at, change| [at, change] }
      edges.reduce([0, 0]) { |(now, most), (_, change)| [now + change, [most, now + change].max] }.last
    end

    def read_line(io)
      flunk "the child said nothing within 10 s" unless io.wait_readable(10)
      io.gets&.chomp
    end
  end
end
