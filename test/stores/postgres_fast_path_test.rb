# frozen_string_literal: true

require_relative "store_helper"
require "lease_machines/stores/postgres"
require "delegate"

module LeaseMachines
  # The PostgreSQL store without a before_commit hook: read, decide, and a
  # compare-and-set write that commits on its own (see Stores::Postgres).
  class PostgresFastPathTest < Minitest::Test
    include StoreTestHelper

    COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"

    def setup
      @url = StoreTestHelper::PostgresServer.url
      @admin = StoreTestHelper::PostgresServer.connect
      @closing = []
    end

    def teardown
      @admin.exec("ROLLBACK") if @admin && @admin.transaction_status != PG::PQTRANS_IDLE
      @closing.each(&:close)
      @admin&.close
    end

    def test_a_write_that_finds_the_row_changed_decides_again_on_the_new_row
      name = unique_name("cas")
      conn = connection
      store = store_on(conn)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      # Another writer changes the row and holds it: owner 9 now holds token 2.
      @admin.exec("BEGIN")
      @admin.exec_params("UPDATE lease_machines_resources SET last_issued = 2, lease_owner = 9, lease_token = 2, " \
                         "lease_expires_at_ns = 100000000000, observed_ns = 2000000000 WHERE name = $1", [name])
      backend = conn.backend_pid # the store's own connection: it was given this one
      # A reacquire waits for another decision's write (a plain acquire would
      # be refused at once: see the contention tests below).
      caller = Thread.new { store.authority(name).reacquire(owner: 2, now: 3, ttl: 1) }
      # The call read the committed row (owner 1, expired at 2 s), decided to
      # grant token 2, and now waits for the row lock to write it.
      wait_for { activity(backend, "wait_event_type") == "Lock" }
      @admin.exec("COMMIT")
      assert_equal Decision.rejected(:occupied), caller.value, "decided again on the row that won"
      checkpoint = store.authority(name).checkpoint
      assert_equal 9, checkpoint.lease.owner
      assert_equal 2, checkpoint.last_issued
      assert_equal 2 * Stores::NANOS_PER_SECOND, checkpoint.observed_ns, "a refusal within the winner's lease writes nothing"
    end

    # Another decision's write of the row, not yet committed (here an
    # operator's transaction holding the row lock): a plain acquire that
    # would be granted is refused at once and writes nothing, where waiting
    # would cost that commit's flush (Native::Request#on_contention).
    def test_an_acquire_that_meets_another_write_is_refused_at_once
      [nil, 30.0].each do |lock_timeout|
        name = unique_name("contended")
        store = store_on(connection, lock_timeout: lock_timeout)
        store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
        before = store.authority(name).checkpoint
        @admin.exec("BEGIN")
        @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
        # The lease expired at 2 s: at 3 s the acquire is decided as a grant.
        caller = Thread.new { store.authority(name).acquire(owner: 2, now: 3, ttl: 1) }
        answered = caller.join(10)
        @admin.exec("ROLLBACK")
        assert answered, "the acquire waited for the other write (lock_timeout #{lock_timeout.inspect})"
        assert_equal Decision.rejected(:occupied), caller.value, "lock_timeout #{lock_timeout.inspect}"
        assert_equal before, store.authority(name).checkpoint, "the refusal wrote nothing"
        assert_equal 2, store.authority(name).acquire(owner: 2, now: 3, ttl: 1).lease.token,
                     "once the other write is gone, the same acquire is granted"
      end
    end

    # A request that runs a hook once, right after its first decision: here
    # another decision commits between the store's read and its write.
    class AfterFirstDecision < SimpleDelegator
      def initialize(request, &hook)
        super(request)
        @hook = hook
      end

      def decide(...)
        __getobj__.decide(...).tap do
          hook = @hook
          @hook = nil
          hook&.call
        end
      end
    end

    # The other decision committed after the read and before the grant's
    # write: that is no contention, the acquire decides again on the new row
    # (here a free one, so it is granted, with the next token).
    def test_an_acquire_whose_row_changed_before_its_write_decides_again
      name = unique_name("changed")
      store = store_on(connection)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      request = AfterFirstDecision.new(Native::Request.acquire(2, 3, 1)) do
        @admin.exec_params("UPDATE lease_machines_resources SET last_issued = 5, lease_owner = NULL, " \
                           "lease_token = NULL, lease_expires_at_ns = NULL, observed_ns = 2000000000 WHERE name = $1",
                           [name])
      end
      decision = store.decide(name, request)
      assert_predicate decision, :granted?
      assert_equal 6, decision.lease.token, "decided again on the row that changed"
      assert_equal 6, store.authority(name).checkpoint.last_issued
    end

    # The holder's requests (and a reacquire) wait for the other write and
    # then decide on what it left: a spurious refusal would tell the holder it
    # had lost the lease.
    def test_a_holders_requests_wait_for_another_write
      [->(authority) { authority.renew(owner: 1, token: 1, now: 2, ttl: 10) },
       ->(authority) { authority.release(owner: 1, token: 1, now: 2) },
       ->(authority) { authority.reacquire(owner: 1, now: 2, ttl: 10) }].each do |request|
        name = unique_name("contended-holder")
        conn = connection
        store = store_on(conn)
        store.authority(name).acquire(owner: 1, now: 1, ttl: 10)
        @admin.exec("BEGIN")
        @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
        backend = conn.backend_pid
        caller = Thread.new { request.call(store.authority(name)) }
        wait_for { activity(backend, "wait_event_type") == "Lock" }
        @admin.exec("ROLLBACK")
        refute_predicate caller.value, :rejected?
      end
    end

    def test_a_backend_terminated_during_the_write_is_an_uncertain_outcome
      name = unique_name("cas-kill")
      conn = connection
      store = store_on(conn)
      store.authority(name).acquire(owner: 1, now: 100, ttl: 10)
      before = store.authority(name).checkpoint
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      backend = conn.backend_pid
      caller = Thread.new do
        store.authority(name).reacquire(owner: 1, now: 101, ttl: 10)
      rescue StandardError => e
        e
      end
      wait_for { activity(backend, "wait_event_type") == "Lock" }
      terminate(backend)
      error = caller.value
      @admin.exec("ROLLBACK")
      assert_kind_of OutcomeUnknownError, error, "the write commits by itself: its outcome cannot be known"
      assert_equal before, store.authority(name).checkpoint, "it had not committed"
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 102, ttl: 10).lease.token
    end

    def test_the_write_waits_at_most_lock_timeout
      name = unique_name("cas-timeout")
      store = store_on(connection, lock_timeout: 0.2)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      before = store.authority(name).checkpoint
      @admin.exec("BEGIN")
      @admin.exec_params("SELECT 1 FROM lease_machines_resources WHERE name = $1 FOR UPDATE", [name])
      started = monotonic
      error = assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
      refute_kind_of OutcomeUnknownError, error, "the server refused the write: nothing was committed"
      assert_kind_of PG::LockNotAvailable, error.cause
      assert_operator monotonic - started, :<, 3.0
      @admin.exec("ROLLBACK")
      assert_equal before, store.authority(name).checkpoint
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
    end

    def test_statements_are_prepared_once_per_session_and_again_when_lost
      conn = connection
      store = store_on(conn)
      authority = store.authority(unique_name("prepared"))
      assert_predicate store, :prepared_statements?
      authority.acquire(owner: 1, now: 1, ttl: 1)
      assert_equal 10, prepared(conn).size, "read, clock, compare-and-set, a grant's compare-and-set, create " \
                                            "and a release's compare-and-set, the last four again writing " \
                                            "the holder's label"
      conn.exec("DEALLOCATE ALL") # what a pooler's DISCARD ALL does behind the store's back
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token
      assert_equal 10, prepared(conn).size
      conn.reset # a new backend, the same connection object
      assert_equal 3, authority.reacquire(owner: 1, now: 3, ttl: 1).lease.token
      assert_equal 10, prepared(conn).size
    end

    def test_without_prepared_statements_nothing_is_prepared
      conn = connection
      [nil, 5.0].each do |lock_timeout|
        store = store_on(conn, prepared_statements: false, lock_timeout: lock_timeout)
        refute_predicate store, :prepared_statements?
        authority = store.authority(unique_name("unprepared"))
        assert_equal 1, authority.acquire(owner: 1, now: 1, ttl: 1).lease.token
        assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 10).lease.token
        assert_same Decision::RELEASED, authority.release(owner: 1, token: 2, now: 3)
      end
      assert_empty prepared(conn)
      error = assert_raises(TypeError) { Stores::Postgres.new(conn, prepared_statements: "yes") }
      assert_equal 'prepared_statements must be true or false, got "yes"', error.message
    end

    def test_a_name_that_needs_quoting_is_safe_under_lock_timeout
      store = store_on(connection, lock_timeout: 1)
      name = "it's a \\ name; DROP TABLE lease_machines_resources; --"
      assert_equal 1, store.authority(name).acquire(owner: 1, now: 1, ttl: 1).lease.token
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
      assert_equal 2, store.status(name).last_issued
    end

    # Several processes decide on one resource with no hook: a trigger logs
    # every committed version of the row (under the row lock, so in commit
    # order), and the versions are checked against the rules.
    def test_concurrent_processes_without_a_hook_never_overlap
      name = unique_name("cas-contended")
      install_version_log
      reports = Dir.mktmpdir("lease_machines_cas")
      pids = Array.new(3) { |index| fork_child { contend(name, index + 1, File.join(reports, "#{index + 1}.txt")) } }
      pids.each { |pid| assert_child_succeeded(pid, timeout: 60) }
      versions = @admin.exec_params("SELECT #{COLUMNS} FROM lm_versions WHERE name = $1 ORDER BY seq", [name])
                       .values.map { |row| row.map { |value| value && Integer(value, 10) } }
      assert_operator versions.size, :>=, 100, "expected at least a hundred committed versions"
      assert_operator versions.map { |version| version[1] }.compact.uniq.size, :>=, 2, "the lease changed hands"
      check_versions(versions)
      granted = Dir[File.join(reports, "*.txt")].flat_map { |path| File.readlines(path, chomp: true) }
      committed = versions.filter_map { |_, owner, token, _, _| "#{owner}:#{token}" if token }.uniq
      assert_equal granted.sort, (granted & committed).sort, "every returned grant was committed"
      assert_equal granted.uniq.size, granted.size, "no token was granted twice"
    ensure
      FileUtils.rm_rf(reports) if reports
    end

    private

    def connection(url = @url)
      StoreTestHelper::PostgresServer.connect(url).tap { |conn| @closing << conn }
    end

    def store_on(conn, **options)
      Stores::Postgres.new(conn, **options)
    end

    def prepared(conn)
      conn.exec("SELECT name FROM pg_prepared_statements WHERE name LIKE 'lease\\_machines\\_%'").column_values(0)
    end

    def install_version_log
      @admin.exec("SET client_min_messages = warning")
      @admin.exec(<<~SQL)
        CREATE TABLE IF NOT EXISTS lm_versions (
          seq bigserial PRIMARY KEY, name text, last_issued numeric(20,0), lease_owner numeric(20,0),
          lease_token numeric(20,0), lease_expires_at_ns numeric(20,0), observed_ns numeric(20,0));
        CREATE OR REPLACE FUNCTION lm_log_version() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO lm_versions (name, #{COLUMNS})
          VALUES (NEW.name, NEW.last_issued, NEW.lease_owner, NEW.lease_token, NEW.lease_expires_at_ns, NEW.observed_ns);
          RETURN NULL;
        END $$;
        DROP TRIGGER IF EXISTS lm_log_version ON lease_machines_resources;
        CREATE TRIGGER lm_log_version AFTER INSERT OR UPDATE ON lease_machines_resources
          FOR EACH ROW EXECUTE FUNCTION lm_log_version();
      SQL
    end

    def contend(name, owner, report_path)
      url = "#{@url}%20-c%20synchronous_commit%3Doff"
      authority = Stores::Postgres.new(url).authority(name)
      rng = Random.new(owner)
      token = nil
      versions = PG.connect(@url)
      File.open(report_path, "w") do |report|
        # Until the row has enough committed versions (most calls are
        # refusals, which write nothing), at most 6,000 calls.
        6000.times do |call|
          break if (call % 100).zero? && versions.exec_params("SELECT count(*) FROM lm_versions WHERE name = $1", [name])
                                                 .getvalue(0, 0).to_i >= 200

          decision = if token && rng.rand < 0.5
                       authority.renew(owner: owner, token: token, ttl: 0.003)
                     elsif token && rng.rand < 0.3
                       authority.release(owner: owner, token: token)
                     else
                       authority.acquire(owner: owner, ttl: 0.003)
                     end
          report.puts("#{owner}:#{decision.lease.token}") if decision.granted?
          token = decision.lease&.token if decision.granted? || decision.renewed? || decision.released? ||
                                           decision.rejected?
        end
      end
    ensure
      versions&.close
    end

    # Versions in commit order: the high-water mark and the clock never go
    # back, and a new token goes to a new holder only when the previous lease
    # was gone (released or expired at the version's clock).
    def check_versions(versions)
      versions.each_cons(2) do |(last_a, owner_a, token_a, expires_a, observed_a), (last_b, _owner_b, token_b, _e, observed_b)|
        assert_operator last_b.to_i, :>=, last_a.to_i
        assert_operator observed_b, :>=, observed_a
        next if token_b.nil? || token_b == token_a

        assert_equal last_a.to_i + 1, token_b, "a grant takes the next token"
        next if token_a.nil?

        assert_operator expires_a, :<=, observed_b, "token #{token_b} granted while #{owner_a}'s lease was unexpired"
      end
    end
  end
end
