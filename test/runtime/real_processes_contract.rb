# frozen_string_literal: true

require_relative "../stores/store_helper"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"

module LeaseMachines
  # `hold` in real time, in real processes, on both durable engines, with
  # short TTLs: a holder SIGSTOPped past its TTL is lost, and the write it
  # attempts when it wakes is refused by the fence; a hold renews past many
  # TTLs; a forked child never renews its parent's lease.
  module RealProcessesContract
    include StoreTestHelper

    TTL = 0.6

    def test_a_holder_stopped_past_its_ttl_is_lost_and_its_fenced_write_refused
      name = unique_name("stopped")
      to_child_r, to_child = IO.pipe
      from_child, from_child_w = IO.pipe
      pid = fork_child do
        to_child.close
        from_child.close
        new_store.authority(name).hold!(owner: 1, ttl: TTL, renew_after: 0.2, warn_before: 0.2) do |held|
          from_child_w.puts(held.token)
          to_child_r.gets # the parent stops this process, takes over, and resumes it
          at_risk = held.at_risk? # first thing on waking, before any renewal answer
          lost = held.lost? # the whole TTL passed: lost at once, whatever the renewal thread does
          written = begin
            new_fences.guard(name, held.token) { |conn| write_row(conn, name, "child") }
            "written"
          rescue FencedError
            "fenced"
          end
          sleep 0.3 # the renewal thread wakes too and finds the lease gone
          checked = begin
            held.check! && "ok"
          rescue LeaseLost
            "lost"
          end
          from_child_w.puts([at_risk, lost, written, held.lost?, checked].join(","))
        end
      end
      to_child_r.close
      from_child_w.close
      assert_equal "1", read_line(from_child)
      sleep 0.3 # renewed at least once
      Process.kill(:STOP, pid)
      sleep TTL + 0.4
      takeover = new_store.authority(name).acquire(owner: 2, ttl: 30)
      assert_predicate takeover, :granted?, "the stopped holder's lease ran out"
      assert_equal 2, takeover.lease.token
      new_fences.guard(name, 2) { |conn| write_row(conn, name, "parent") }
      Process.kill(:CONT, pid)
      to_child.puts("go")
      assert_equal "true,true,fenced,true,lost", read_line(from_child)
      assert_child_succeeded(pid)
      assert_equal 2, new_store.authority(name).checkpoint.lease.token, "the old holder released nothing of the new one's"
    ensure
      [to_child, from_child].each { |io| io&.close unless io&.closed? }
    end

    def test_a_hold_renews_across_many_ttls_and_releases
      name = unique_name("long")
      store = new_store
      # At risk 0.9 s after a confirmed send: 0.7 s of slack for a loaded machine.
      tokens = store.authority(name).hold!(owner: 3, ttl: 1.2, renew_after: 0.2, warn_before: 0.3) do |held|
        16.times do
          sleep 0.15
          held.check!
        end
        [held.token, held.lease.expires_at > Time.now.to_f]
      end
      assert_equal [1, true], tokens
      assert_nil store.authority(name).checkpoint.lease
    end

    # The child holds a lease of its own for several renewals: the renewal
    # thread it starts renews its lease only, never the one it inherited.
    def test_a_forked_child_does_not_renew_its_parents_lease
      name = unique_name("fork")
      store = new_store
      store.authority(name).hold!(owner: 4, ttl: 1.5, renew_after: 0.2, warn_before: 0.5) do |held|
        pid = fork_child do
          raise "the child holds its parent's lease" unless held.lost? && held.reason == :forked

          renewed = []
          LeaseMachines.subscribe { |event, payload| renewed << payload[:resource] if event == :renew }
          new_store.authority("#{name}-child").hold!(owner: 5, ttl: TTL, renew_after: 0.2, warn_before: 0.2) do
            sleep 0.7
          end
          raise "the child renewed #{renewed.uniq.inspect}" unless renewed.uniq == ["#{name}-child"]
        end
        assert_child_succeeded(pid)
        held.check!
      end
    end

    # Two processes, one leader. The leader is stopped past its lease; the
    # other takes over with a greater token; the old one, resumed, knows it
    # is no leader before it does anything, and is deposed.
    def test_two_electors_one_leader_and_a_stopped_leader_is_replaced
      name = unique_name("leader")
      first, first_out, first_control = elect(name, 1)
      assert_equal "elected 1", read_line(first_out)
      second, second_out, second_control = elect(name, 2)
      refute second_out.wait_readable(0.5), "a second leader while the first renews"
      Process.kill(:STOP, first)
      assert_equal "elected 2", read_line(second_out), "taken over with a greater token"
      Process.kill(:CONT, first)
      # On waking, its worker asks leader? (false from its own clock, whatever
      # the elector's thread has done yet) and the term ends.
      assert_equal ["deposed 1", "resumed leader?=false"], [read_line(first_out), read_line(first_out)].sort
      [first_control, second_control].each { |io| io.puts("stop") }
      assert_equal "deposed 2", read_line(second_out)
      [first, second].each { |pid| assert_child_succeeded(pid) }
      assert_nil new_store.authority(name).checkpoint.lease, "the last leader released on stop"
    ensure
      [first_out, first_control, second_out, second_control].each { |io| io&.close unless io&.closed? }
    end

    private

    # A child process campaigning as `owner`: it reports each term on its
    # output, and stops when told on its control pipe.
    def elect(name, owner)
      control_r, control = IO.pipe
      out, out_w = IO.pipe
      pid = fork_child do
        control.close
        out.close
        out_w.sync = true
        elector = Elector.new(new_store.authority(name), owner: owner, lease_duration: 1.2, renew_deadline: 0.9,
                                                         retry_period: 0.15,
                                                         on_elected: ->(term) { out_w.puts("elected #{term}") },
                                                         on_deposed: ->(term) { out_w.puts("deposed #{term}") })
        watch = Thread.new do # a worker asking leader? before each step of its work
          last = monotonic
          loop do
            sleep 0.01
            now = monotonic
            out_w.puts("resumed leader?=#{elector.leader?}") if now - last > 1.0
            last = now
          end
        end
        elector.start
        control_r.gets
        elector.stop
        watch.kill
      end
      control_r.close
      out_w.close
      [pid, out, control]
    end

    def read_line(io)
      flunk "nothing from the child within 10 s" unless io.wait_readable(10)
      io.gets&.chomp
    end
  end
end
