# frozen_string_literal: true

require "open3"
require_relative "../support/restart_cluster"

require_relative "postgres_contract"
require_relative "server_session_cases"
require_relative "deadline_cases"

module LeaseMachines
  class PostgresStoreTest < Minitest::Test
    include PostgresContract
    include ServerSessionCases
    include DeadlineCases

    # --- PostgreSQL only ----------------------------------------------------------

    # renew_all's renewals share one server transaction (one txid), and the
    # server ending the connection in the middle of the batch fails the
    # whole batch: nothing of it is committed, and the store reconnects.
    def test_a_batch_is_one_server_transaction_and_a_connection_ended_mid_batch_fails_all_of_it
      names = Array.new(3) { |index| unique_name("batch-kill-#{index}") }
      leases = names.map { |name| new_store.authority(name).acquire(owner: 1, ttl: 30).lease }
      renewals = names.zip(leases).map { |name, lease| { name: name, owner: 1, token: lease.token, ttl: 60 } }
      txids = []
      seen = new_store(before_commit: ->(commit) { txids << commit.connection.exec("SELECT txid_current()").getvalue(0, 0) })
      assert_equal %i[renewed] * 3, seen.renew_all(renewals).map(&:status)
      assert_equal 1, txids.uniq.size, "one transaction: #{txids.inspect}"

      killed = 0
      store = new_store(before_commit: lambda { |commit|
        killed += 1
        terminate(commit.connection.backend_pid) if killed == 2
      })
      renewed = names.map { |name| new_store.authority(name).checkpoint.lease }
      error = assert_raises(StoreError) { store.renew_all(renewals) }
      refute_kind_of OutcomeUnknownError, error, "ended before COMMIT was sent: certainly not committed"
      assert_equal renewed, names.map { |name| new_store.authority(name).checkpoint.lease }, "nothing of the batch"
      assert_equal %i[renewed] * 3, store.renew_all(renewals).map(&:status), "the store reconnected"
    end

    def hold_row_lock(name)
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      yield
    ensure
      @admin.exec("ROLLBACK")
    end

    # Backends of this database waiting for a lock.
    def lock_waiters
      Integer(@admin.exec("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() " \
                          "AND wait_event_type = 'Lock'").getvalue(0, 0), 10)
    end

    def test_a_backend_terminated_just_before_commit_raises_outcome_unknown
      name = unique_name("terminated")
      baseline = new_store.authority(name)
      baseline.acquire(owner: 1, now: 100, ttl: 10)
      before = baseline.checkpoint
      armed = true
      hook = lambda do |commit|
        next unless armed

        armed = false
        terminate(commit.connection.backend_pid)
      end
      connection = StoreTestHelper::PostgresServer.connect
      store = Stores::Postgres.new(connection, before_commit: hook)

      error = assert_raises(OutcomeUnknownError) { store.authority(name).reacquire(owner: 1, now: 101, ttl: 10) }
      assert_kind_of PG::Error, error.cause
      assert_equal before, baseline.checkpoint, "the backend died before COMMIT: nothing was committed"
      granted = store.authority(name).reacquire(owner: 1, now: 102, ttl: 10)
      assert_equal 2, granted.lease.token, "the same store reconnects and the history goes on"
    ensure
      connection&.close
    end

    # With a before_commit hook a decision is an explicit transaction that
    # takes the row lock first: dying in the lock wait is before COMMIT.
    def test_a_backend_terminated_while_waiting_for_the_row_lock_is_a_store_error
      name = unique_name("lock-wait")
      baseline = new_store.authority(name)
      baseline.acquire(owner: 1, now: 100, ttl: 10)
      before = baseline.checkpoint
      connection = StoreTestHelper::PostgresServer.connect
      backend = connection.backend_pid
      store = Stores::Postgres.new(connection, lock_timeout: 30, before_commit: ->(_commit) {})
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      caller = Thread.new do
        store.authority(name).reacquire(owner: 1, now: 101, ttl: 10)
      rescue StandardError => e
        e
      end
      wait_for { activity(backend, "wait_event_type") == "Lock" }
      terminate(backend)
      error = caller.value
      @admin.exec("ROLLBACK")
      assert_kind_of StoreError, error
      refute_kind_of OutcomeUnknownError, error, "the transaction never reached COMMIT"
      assert_equal before, baseline.checkpoint
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 102, ttl: 10).lease.token
    ensure
      connection&.close
    end

    def test_the_row_lock_wait_is_bounded_by_lock_timeout
      name = unique_name
      store = new_store(lock_timeout: 0.2)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      started = monotonic
      error = assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
      assert_kind_of PG::LockNotAvailable, error.cause
      assert_operator monotonic - started, :<, 3.0
      @admin.exec("ROLLBACK")
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
      assert_raises(ArgumentError) { Stores::Postgres.new(@url, lock_timeout: -1) }
      assert_raises(ArgumentError) { Stores::Postgres.new(@url, lock_timeout: Float::NAN) }
    ensure
      @admin.exec("ROLLBACK") if @admin.transaction_status != PG::PQTRANS_IDLE
    end

    def test_with_a_hook_the_store_clock_is_read_after_the_row_lock_is_granted
      name = unique_name
      store = new_store(before_commit: ->(_commit) {})
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      caller = Thread.new { store.authority(name).acquire(owner: 2, ttl: 60) }
      sleep 0.4
      released_at_ms = Integer(@admin.exec("SELECT #{Stores::Postgres::CLOCK_MS}").getvalue(0, 0))
      @admin.exec("ROLLBACK")
      decided_at_ms = (caller.value.lease.expires_at_ns / Stores::NANOS_PER_MILLISECOND) - 60_000
      assert_operator decided_at_ms, :>=, released_at_ms, "the decision's clock was read after the lock wait"
    end

    def test_a_failed_statement_in_the_transaction_makes_commit_a_store_error
      name = unique_name
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      before = authority.checkpoint
      baseline = authority
      hook = lambda do |commit|
        commit.connection.exec("SELECT 1 / 0")
      rescue PG::DivisionByZero
        nil # swallowed: the transaction is aborted anyway, and COMMIT answers ROLLBACK
      end
      authority = new_store(before_commit: hook).authority(name)
      error = assert_raises(StoreError) { authority.reacquire(owner: 1, now: 2, ttl: 1) }
      refute_kind_of OutcomeUnknownError, error
      assert_match(/answered ROLLBACK to COMMIT/, error.message)
      assert_equal before, baseline.checkpoint
    end

    def test_a_connection_inside_a_transaction_is_refused_and_left_alone
      connection = StoreTestHelper::PostgresServer.connect
      connection.exec("BEGIN")
      authority = Stores::Postgres.new(connection).authority(unique_name)
      error = assert_raises(StoreError) { authority.acquire(owner: 1, ttl: 1) }
      assert_match(/inside a transaction/, error.message)
      assert_equal PG::PQTRANS_INTRANS, connection.transaction_status
      connection.exec("ROLLBACK")
    ensure
      connection&.close
    end

    def test_a_connection_lost_between_calls_costs_one_store_error_then_reconnects
      connection = StoreTestHelper::PostgresServer.connect
      store = Stores::Postgres.new(connection)
      authority = store.authority(unique_name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      terminate(connection.backend_pid)
      error = assert_raises(StoreError) { authority.reacquire(owner: 1, now: 2, ttl: 1) }
      refute_kind_of OutcomeUnknownError, error, "BEGIN failed: nothing was sent to commit"
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token
    ensure
      connection&.close
    end

    def test_a_pool_responding_to_with
      pool = TinyPool.new(Array.new(2) { StoreTestHelper::PostgresServer.connect })
      name = unique_name
      authority = Stores::Postgres.new(pool).authority(name)
      threads = Array.new(4) { |index| Thread.new { authority.acquire(owner: index, now: 5, ttl: 5) } }
      decisions = threads.map(&:value)
      assert_equal 1, decisions.count(&:granted?)
      assert_equal 1, new_store.authority(name).checkpoint.last_issued
      assert_equal 2, pool.connections.size
    ensure
      pool&.connections&.each(&:close)
    end

    def test_a_serializable_server_default_does_not_change_the_transaction
      options = "%20-c%20default_transaction_isolation%3Dserializable"
      serializable = StoreTestHelper::PostgresServer.connect("#{@url}#{options}")
      levels = []
      hook = ->(commit) { levels << commit.connection.exec("SHOW transaction_isolation").getvalue(0, 0) }
      Stores::Postgres.new(serializable, before_commit: hook).authority(unique_name).acquire(owner: 1, ttl: 1)
      assert_equal ["read committed"], levels
    ensure
      serializable&.close
    end

    def test_connection_arguments_are_validated
      error = assert_raises(TypeError) { Stores::Postgres.new(42) }
      assert_match(/\Aconnection must be a PG::Connection, a connection URL String, a pool/, error.message)
      closed = StoreTestHelper::PostgresServer.connect
      closed.close
      error = assert_raises(StoreError) { Stores::Postgres.new(closed).authority("x").checkpoint }
      assert_match(/closed/, error.message)
      bad = Stores::Postgres.new("postgres://postgres@127.0.0.1:1/nowhere")
      assert_raises(StoreError) { bad.authority("x").acquire(owner: 1, ttl: 1) }
    end

    # --- interrupted calls, outages, forks, bounded calls ---------------------------

    # A restart of the server (a cluster of this test's own, started and
    # stopped with script/postgres, so the one every other test uses is never
    # restarted) while three threads decide on one store: calls fail with
    # StoreError while the server is down, and every call after it is back
    # works, on a URL store, a handed-in connection and a pool alike.
    def test_a_store_recovers_after_the_server_restarts
      url = server("start")
      Stores::Postgres.new(url).tap(&:setup!).close
      handed_in = PG.connect(url)
      pool = TinyPool.new(Array.new(2) { PG.connect(url) })
      [Stores::Postgres.new(url), Stores::Postgres.new(handed_in), Stores::Postgres.new(pool)].each_with_index do |store, round|
        outcomes = decide_through_a_restart(store)
        back = outcomes.fetch(:back)
        errors = outcomes.fetch(:calls).reject { |_started, outcome| outcome == :ok }
        errors.each { |_started, outcome| assert_kind_of StoreError, outcome }
        late = errors.select { |started, _outcome| started > back }
        assert late.empty?, "#{late.size} calls made after the server was back failed: " \
                            "#{late.map(&:last).uniq(&:message).first(3)}"
        assert(outcomes.fetch(:calls).any? { |started, outcome| started > back && outcome == :ok })
        next unless round == 1

        refute_predicate handed_in, :finished?, "the caller's connection object stays usable"
        assert_equal 1, handed_in.exec("SELECT 1").getvalue(0, 0).to_i
      end
    ensure
      handed_in&.close
      pool&.connections&.each(&:close)
      server("stop")
    end

    # The driver's socket closed under it (what pg meets when another
    # thread's reconnect reuses and closes the same descriptor during an
    # outage): IOError from pg is a StoreError of the call, which wrote
    # nothing, and the next call works.
    def test_a_socket_closed_under_the_driver_is_a_store_error
      conn = PG.connect(@url)
      store = Stores::Postgres.new(conn)
      authority = store.authority(unique_name("closed-socket"))
      assert_predicate authority.acquire(owner: 1, ttl: 5), :granted?
      before = authority.checkpoint
      conn.socket_io.close
      error = assert_raises(StoreError) { authority.acquire(owner: 2, ttl: 5) }
      assert_kind_of IOError, error.cause
      assert_equal before.last_issued, authority.checkpoint.last_issued, "nothing was written"
      assert_equal :occupied, authority.acquire(owner: 2, ttl: 5).reason, "the next call works"
    ensure
      conn&.close
    end

    # statement_timeout bounds every statement of a call, the read included:
    # behind a migration's ACCESS EXCLUSIVE lock a call fails with StoreError
    # within about the bound, and writes nothing.
    def test_statement_timeout_bounds_the_whole_call_behind_an_exclusive_lock
      name = unique_name
      warm = new_store(statement_timeout: 0.2)
      warm.authority(unique_name).acquire(owner: 1, ttl: 1) # its statements are prepared already
      stores = [new_store(statement_timeout: 0.2), warm, new_store(statement_timeout: 0.2, lock_timeout: 0.2),
                new_store(statement_timeout: 0.2, prepared_statements: false),
                new_store(statement_timeout: 0.2, before_commit: ->(_commit) {})]
      @admin.exec("BEGIN")
      @admin.exec("LOCK TABLE lease_machines_resources IN ACCESS EXCLUSIVE MODE")
      stores.each_with_index do |store, index|
        started = monotonic
        error = assert_raises(StoreError, "store #{index}") { store.authority(name).acquire(owner: 1, ttl: 30) }
        refute_kind_of OutcomeUnknownError, error
        assert_kind_of PG::QueryCanceled, error.cause, "store #{index}"
        assert_operator monotonic - started, :<, 1.0, "store #{index}: about the bound"
      end
      started = monotonic
      assert_raises(StoreError, "an operator's read too") { warm.status(name) }
      assert_operator monotonic - started, :<, 1.0
      @admin.exec("ROLLBACK")
      assert_nil new_store.status(name), "nothing was written"
      assert_predicate stores.last.authority(name).acquire(owner: 1, ttl: 30), :granted?
      assert_raises(ArgumentError) { Stores::Postgres.new(@url, statement_timeout: 0) }
    ensure
      @admin.exec("ROLLBACK") if @admin.transaction_status != PG::PQTRANS_IDLE
    end

    # A minimal pool: what connection_pool's `with` does.
    class TinyPool
      attr_reader :connections

      def initialize(connections)
        @connections = connections
        @free = Queue.new
        connections.each { |connection| @free << connection }
      end

      def with
        connection = @free.pop
        yield connection
      ensure
        @free << connection if connection
      end
    end

    private

    # The backend pid of the session a store opened from its URL.
    def server_session(store)
      backend = nil
      store.instance_variable_get(:@connections).with { |session| backend = session.connection.backend_pid }
      backend
    end

    # The restart test's own cluster (port and folder of its own).
    RESTART_CLUSTER = RestartCluster.environment(12)
    SCRIPT = File.expand_path("../../script/postgres", __dir__)

    # Runs script/postgres on the restart cluster. @return [String] its output (the URL on start)
    def server(action)
      out, status = Open3.capture2(RESTART_CLUSTER, SCRIPT, action)
      assert_predicate status, :success?, "script/postgres #{action}"
      out.strip
    end

    # Three threads decide in a loop through a stop and a start of the server.
    def decide_through_a_restart(store)
      calls = Queue.new
      running = true
      threads = Array.new(3) do |index|
        Thread.new do
          authority = store.authority(unique_name("restart-#{index}"))
          while running
            started = monotonic
            outcome = begin
              authority.acquire(owner: index, ttl: 30)
              :ok
            rescue StandardError => e
              e
            end
            calls << [started, outcome]
            sleep 0.01
          end
        end
      end
      sleep 0.3
      begin
        server("stop")
        sleep 1
      ensure
        server("start")
      end
      back = monotonic
      sleep 1
      running = false
      threads.each(&:join)
      { back: back, calls: Array.new(calls.size) { calls.pop } }
    end
  end
end
