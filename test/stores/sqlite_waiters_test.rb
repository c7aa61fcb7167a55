# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "lease_machines/stores/sqlite"

module LeaseMachines
  # SQLite's handover fairness pauses a grant of a resource released a moment
  # ago only while another process wants it ({Stores::SQLite::Waiters}): a
  # process taking and giving back a lease nobody else wants pays nothing.
  class SQLiteWaitersTest < Minitest::Test
    # Counts the fairness pauses of one store (its calls of Kernel#sleep
    # outside a wait).
    module CountedPauses
      attr_reader :pauses

      def take_turn(...)
        @in_turn = true
        super
      ensure
        @in_turn = false
      end

      def sleep(seconds)
        @pauses = (@pauses || 0) + 1 if @in_turn
        super
      end
      private :sleep
    end

    STILL = -> { 1_800_000_000_000 }

    def setup
      @dir = Dir.mktmpdir("lease_machines_waiters")
      @path = File.join(@dir, "leases.sqlite3")
      # A store clock that stands still: every grant after a release falls in
      # the fairness window, however slowly the machine runs.
      @store = Stores::SQLite.new(@path, clock: STILL).setup!
      @store.singleton_class.prepend(CountedPauses)
    end

    def teardown
      @store.close
      FileUtils.rm_rf(@dir)
    end

    def test_taking_and_giving_back_a_lease_nobody_else_wants_never_pauses
      cycle(20)

      assert_nil @store.pauses
    end

    def test_a_grant_just_after_a_release_takes_its_turn_while_another_process_polls_for_it
      with_child(-> { loop { @store_in_child.await_handover("r", 30) } }) do
        cycle_until_paused(10)

        assert_operator @store.pauses.to_i, :>=, 10, "grants just after a release paused while the other process polled"
      end
    end

    def test_a_grant_just_after_a_release_takes_its_turn_while_another_process_is_refused_it
      hammer = lambda do
        authority = @store_in_child.authority("r")
        loop do
          lease = authority.acquire(owner: 2, ttl: 30).lease
          next unless lease

          sleep 0.002
          authority.release(owner: 2, token: lease.token)
        end
      end
      with_child(hammer) do
        cycle_until_paused(10, hold: 0.002)

        assert_operator @store.pauses.to_i, :>=, 10, "grants paused while the other process was being refused"
      end
    end

    def test_a_want_counts_only_for_a_moment_and_only_for_its_resource
      with_child(-> { loop { @store_in_child.await_handover("other", 30) } }) do
        cycle(20)

        assert_nil @store.pauses, "nobody wants r"
      end
      sleep 0.05 # the child's last stamp is older than a waiter's poll
      cycle(20)

      assert_nil @store.pauses
    end

    def test_its_own_want_does_not_make_a_process_pause
      other = Stores::SQLite.new(@path, clock: STILL).tap { |store| store.authority("r").acquire(owner: 2, ttl: 30) }
      refute_predicate @store.authority("r").acquire(owner: 1, ttl: 30), :granted? # stamps r as wanted, by this process
      other.force_release("r")
      cycle(20)

      assert_nil @store.pauses
    ensure
      other&.close
    end

    def test_a_waiter_taking_what_another_process_released_does_not_pause
      with_child(-> { loop { @store_in_child.await_handover("r", 30) } }) do
        20.times do
          other = Stores::SQLite.new(@path, clock: STILL)
          lease = other.authority("r").acquire(owner: 2, ttl: 30).lease
          other.authority("r").release(owner: 2, token: lease.token)
          other.close
          assert_predicate @store.authority("r").acquire(owner: 1, ttl: 30), :granted?
          @store.force_release("r")
        end

        assert_nil @store.pauses, "only the process that released takes its turn"
      end
    end

    def test_a_read_only_store_is_refused_without_a_stamp_and_makes_no_file
      @store.authority("r").acquire(owner: 2, ttl: 30)
      FileUtils.rm_f("#{@path}-waiters")
      readonly = Stores::SQLite.new(@path, readonly: true)
      assert_equal :occupied, readonly.authority("r").acquire(owner: 1, ttl: 30).reason
      readonly.await_handover("r", 0.05)

      refute_path_exists "#{@path}-waiters"
    ensure
      readonly&.close
    end

    private

    # Runs `body` in a forked child, on a store of its own on the same
    # file, until the block has run; the child has started it first.
    def with_child(body)
      reader, writer = IO.pipe
      child = fork do
        reader.close
        @store_in_child = Stores::SQLite.new(@path)
        @store_in_child.await_handover("warm-up", 0)
        writer.puts "started"
        writer.close
        body.call
      end
      writer.close
      reader.gets
      sleep 0.05 # its first stamps are written
      yield
    ensure
      Process.kill(:KILL, child) if child
      Process.wait(child) if child
    end

    # Cycles until the store has paused `pauses` times, or 500 cycles: how
    # many grants fall in a pause's window (within HANDOVER_WINDOW of the
    # release, within RECENT of the other process's stamp) depends on how
    # the machine schedules the two processes, so the tests count pauses
    # rather than cycles. Without the pause there are none at all.
    def cycle_until_paused(pauses, hold: 0)
      500.times do
        break if @store.pauses.to_i >= pauses

        cycle(1, hold: hold)
      end
    end

    # Takes and gives back one lease `times` times, back to back.
    def cycle(times, hold: 0)
      authority = @store.authority("r")
      times.times do
        lease = nil
        lease = authority.acquire(owner: 1, ttl: 30).lease until lease # another process may hold it a moment
        sleep hold if hold.positive?
        authority.release(owner: 1, token: lease.token)
      end
    end
  end
end
