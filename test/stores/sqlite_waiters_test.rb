# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "lease_machines/stores/sqlite"

module LeaseMachines
  # SQLite's handover fairness pauses a grant of a resource released a moment
  # ago only while some process waits for a release ({Stores::SQLite::Waiters}):
  # a process taking and giving back a lease nobody else wants pays nothing.
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
    end

    def setup
      @dir = Dir.mktmpdir("lease_machines_waiters")
      @path = File.join(@dir, "leases.sqlite3")
      # A store clock that stands still: every grant after a release falls in
      # the fairness window, however slowly the machine runs.
      @store = Stores::SQLite.new(@path, clock: -> { 1_800_000_000_000 }).setup!
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

    def test_a_waiting_thread_of_this_process_is_counted_until_it_stops_waiting
      held = @store.authority("r").acquire(owner: 1, ttl: 30).lease
      waiter = Thread.new { loop { break true if @store.await_handover("r", 10) } }
      wait_until { waiters.any? }
      @store.authority("r").release(owner: 1, token: held.token)

      assert waiter.value
      refute_predicate waiters, :any?
    end

    def test_a_grant_just_after_a_release_takes_its_turn_while_another_process_waits
      @store.authority("other").acquire(owner: 9, ttl: 30)
      reader, writer = IO.pipe
      child = fork do
        reader.close
        store = Stores::SQLite.new(@path)
        writer.puts "waiting"
        writer.close
        loop { store.await_handover("other", 30) } # one call waits one poll
      end
      writer.close
      reader.gets
      wait_until { waiters.any? }
      cycle(20)

      assert_equal 19, @store.pauses, "every grant but the first (no row yet) came just after a release"
    ensure
      Process.kill(:KILL, child) if child
      Process.wait(child) if child
    end

    def test_a_read_only_store_counts_no_waiter_and_makes_no_file
      FileUtils.rm_f("#{@path}-waiters")
      readonly = Stores::SQLite.new(@path, readonly: true)
      readonly.await_handover("r", 0.05)

      refute_path_exists "#{@path}-waiters"
    ensure
      readonly&.close
    end

    private

    def waiters
      @store.instance_variable_get(:@waiters)
    end

    # Takes and gives back one lease `times` times, back to back.
    def cycle(times)
      authority = @store.authority("r")
      times.times do
        lease = authority.acquire(owner: 1, ttl: 30).lease
        authority.release(owner: 1, token: lease.token)
      end
    end

    def wait_until(seconds = 10)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
      sleep 0.01 until yield || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      assert yield, "timed out"
    end
  end
end
