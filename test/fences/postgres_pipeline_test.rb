# frozen_string_literal: true

require "tempfile"
require "timeout"
require_relative "fence_helper"

module LeaseMachines
  # A PostgreSQL guard sends its BEGIN (SAVEPOINT in the caller's transaction) and its mark in one round trip,
  # libpq's pipeline mode: a guarded write costs the round trips of the same write unguarded. An interrupt
  # landing anywhere in it leaves the connection out of pipeline mode and nothing of the guard committed.
  class PostgresPipelineTest < Minitest::Test
    include FenceTestHelper
    include FenceTestHelper::PostgresData

    TRIES = 60

    def setup
      super
      @conn = pg_connection
      @conn.exec("SET search_path TO #{PostgresServer.schema}")
      @fences = Fences::Postgres.new(@conn)
      @fences.guard(unique_name("warm"), 1) { nil } # the mark prepared: its PREPARE is once per session
    end

    def test_a_guard_costs_the_round_trips_of_a_plain_transaction
      resource = unique_name
      plain = round_trips do
        @conn.exec("BEGIN")
        driver_write(@conn, resource, "plain")
        @conn.exec("COMMIT")
      end
      guarded = round_trips { @fences.guard(resource, 2) { |conn| driver_write(conn, resource, "guarded") } }

      assert_equal 3, plain
      assert_equal plain, guarded, "BEGIN and the mark in one round trip"
      assert_equal ["guarded", 2], [committed_body(resource), @fences.highest(resource)]
    end

    def test_inside_the_callers_transaction_the_savepoint_and_the_mark_go_together
      resource = unique_name
      @conn.exec("BEGIN")
      guarded = round_trips { @fences.guard(resource, 2) { |conn| driver_write(conn, resource, "joined") } }
      @conn.exec("COMMIT")

      assert_equal 3, guarded, "SAVEPOINT with the mark, the write, RELEASE SAVEPOINT"
      assert_equal ["joined", 2], [committed_body(resource), @fences.highest(resource)]
    end

    def test_without_prepared_statements_begin_and_the_mark_are_one_query
      resource = unique_name
      fences = Fences::Postgres.new(@conn, prepared_statements: false)
      guarded = round_trips { fences.guard(resource, 2) { |conn| driver_write(conn, resource, "unprepared") } }

      assert_equal 3, guarded
      assert_equal "unprepared", committed_body(resource)
    end

    # The mark waits for the fence row another guard holds; Timeout lands in that wait. The guard cancels the
    # mark, so the Timeout reaches the caller while the row is still held (before, only once it was free), and
    # gives the caller's connection back idle, in the same session; nothing of it is committed.
    def test_an_interrupt_while_the_mark_waits_for_the_fence_row_commits_nothing
      resource = unique_name
      @fences.guard(resource, 1) { |conn| driver_write(conn, resource, "by 1") }
      holder = hold_fence_row(resource)
      session = @conn.backend_pid

      waiting = Thread.new do
        Thread.current.report_on_exception = false
        Timeout.timeout(0.3) { @fences.guard(resource, 2) { |conn| driver_write(conn, resource, "by 2") } }
      end
      assert_ended_while_held(waiting, holder, Timeout::Error)
      assert_clean_connection
      assert_equal session, @conn.backend_pid, "the caller's connection keeps its session: read out, not reopened"
      assert_equal ["by 1", 1], [committed_body(resource), @fences.highest(resource)]
      @fences.guard(resource, 3) { |conn| driver_write(conn, resource, "by 3") }
      assert_equal ["by 3", 3], [committed_body(resource), @fences.highest(resource)]
    end

    # Timeout lands while the mark is being prepared (the table is locked, so PREPARE waits): outside any
    # transaction. The guard cancels the PREPARE, reads its answer and sends no ROLLBACK, which would draw "WARNING: there
    # is no transaction in progress"; the connection keeps its session and the next guard commits.
    def test_an_interrupt_while_the_mark_is_prepared_sends_no_stray_rollback
      resource = unique_name
      conn = pg_connection
      conn.exec("SET search_path TO #{PostgresServer.schema}")
      fences = Fences::Postgres.new(conn) # a new session: its first guard prepares the mark
      warnings = []
      conn.set_notice_receiver { |notice| warnings << notice.error_field(PG::PG_DIAG_MESSAGE_PRIMARY) }
      holder = pg_connection
      holder.exec("SET search_path TO #{PostgresServer.schema}")
      holder.exec("BEGIN")
      holder.exec("LOCK TABLE lease_machines_fences IN ACCESS EXCLUSIVE MODE")
      session = conn.backend_pid

      waiting = Thread.new do
        Thread.current.report_on_exception = false
        Timeout.timeout(0.3) { fences.guard(resource, 2) { |c| driver_write(c, resource, "by 2") } }
      end
      assert_ended_while_held(waiting, holder, Timeout::Error)
      assert_equal [[], PG::PQTRANS_IDLE, session], [warnings, conn.transaction_status, conn.backend_pid]
      fences.guard(resource, 3) { |c| driver_write(c, resource, "by 3") }
      assert_equal ["by 3", 3], [committed_body(resource), fences.highest(resource)]
    end

    # The block's own write waits for a row lock; Thread#kill lands in that wait (Sidekiq's shutdown raises
    # likewise). The write is cancelled and rolled back while the lock is still held, on a guard of its own and
    # on one inside the caller's transaction (which keeps what it wrote before the guard).
    def test_an_interrupt_while_the_guarded_write_waits_for_a_lock_ends_it_at_once
      resource = unique_name
      driver_write(@conn, resource, "before")
      [false, true].each do |joined|
        holder = pg_connection
        holder.exec("SET search_path TO #{PostgresServer.schema}")
        holder.exec("BEGIN")
        holder.exec_params("SELECT 1 FROM #{REPORTS} WHERE name = $1 FOR UPDATE", [resource])
        if joined
          @conn.exec("BEGIN")
          driver_write(@conn, "#{resource}-caller", "the caller's")
        end
        started = Queue.new
        waiting = Thread.new do
          Thread.current.report_on_exception = false
          @fences.guard(resource, 5) do |conn|
            started << true
            driver_write(conn, resource, "by 5")
          end
        end
        started.pop
        sleep 0.2 # the write waits for the row
        waiting.kill
        assert_ended_while_held(waiting, holder, nil, "joined: #{joined}")
        if joined
          assert_equal PG::PQTRANS_INTRANS, @conn.transaction_status, "the caller's transaction goes on"
          @conn.exec("COMMIT")
          assert_equal "the caller's", committed_body("#{resource}-caller")
        end
        assert_clean_connection("joined: #{joined}")
        assert_equal "before", committed_body(resource)
      end
    end

    # Thread#kill and Timeout at random instants around a guard, its pipeline included: after each, the
    # connection is idle and out of pipeline mode, and the write committed exactly when its mark did.
    def test_an_interrupt_landing_anywhere_leaves_the_connection_usable_and_the_write_with_its_mark
      resource = unique_name
      span = guard_span(resource)
      TRIES.times do |try|
        token = try + 10
        interrupt(try.even? ? :kill : :timeout, rand * span * 2) do
          @fences.guard(resource, token) { |conn| driver_write(conn, resource, "try #{try}") }
        end
        assert_clean_connection("try #{try}")
        written = committed_body(resource) == "try #{try}"
        assert_equal written, @fences.highest(resource) == token, "try #{try}: the write and its mark commit together"
      end
      @fences.guard(resource, TRIES + 10) { |conn| driver_write(conn, resource, "after") }
      assert_equal "after", committed_body(resource)
    end

    private

    # Round trips a block makes on @conn: runs of messages the client sent before the server answered (libpq's
    # protocol trace).
    def round_trips
      Tempfile.create("lm_pg_trace") do |file|
        @conn.trace(file)
        begin
          yield
        ensure
          @conn.untrace
        end
        file.flush
        directions = File.readlines(file.path).filter_map { |line| line.split("\t")[1] }
        directions.chunk_while { |a, b| a == b }.count { |run| run.first == "F" }
      end
    end

    def assert_clean_connection(context = nil)
      assert_equal PG::PQ_PIPELINE_OFF, @conn.pipeline_status, context
      assert_equal PG::PQTRANS_IDLE, @conn.transaction_status, context
    end

    def guard_span(resource)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      5.times { |i| @fences.guard(resource, 1) { |conn| driver_write(conn, resource, "span #{i}") } }
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) / 5
    end

    def interrupt(how, after, &)
      thread = Thread.new do
        Thread.current.report_on_exception = false
        how == :timeout ? Timeout.timeout(after, &) : yield
      end
      if how == :kill
        sleep after
        thread.kill
      end
      thread.join(10) || flunk("the interrupted guard did not end")
    rescue Timeout::Error
      nil
    end
  end
end
