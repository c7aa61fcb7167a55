# frozen_string_literal: true

require "pathname"
require_relative "store_contract"

module LeaseMachines
  class SQLiteStoreTest < Minitest::Test
    include StoreContract

    COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"

    def setup
      @dir = Dir.mktmpdir("lease_machines_sqlite")
      @path = File.join(@dir, "leases.sqlite3")
      Stores::SQLite.new(@path).setup!.close
    end

    def teardown
      FileUtils.rm_rf(@dir)
    end

    # --- what the contract needs ----------------------------------------------

    def new_store(**options)
      Stores::SQLite.new(@path, **options)
    end

    def engine_connection_class
      SQLite3::Database
    end

    def engine
      :sqlite
    end

    def raw_row(name)
      with_db do |db|
        types = db.execute("SELECT #{COLUMNS.split(', ').map { |c| "typeof(#{c})" }.join(', ')} " \
                           "FROM lease_machines_resources WHERE name = ?", [name]).first
        assert((types - %w[text null]).empty?, "every u64 column is stored as TEXT, got #{types}")
        db.execute("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = ?", [name]).first
          .then { |values| U64_COLUMNS.zip(values).to_h }
      end
    end

    def insert_row(name, last_issued: nil, owner: nil, token: nil, expires_at_ns: nil, observed_ns: 0)
      with_db do |db|
        db.execute("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                   [name, *[last_issued, owner, token, expires_at_ns, observed_ns].map { |v| v&.to_s }])
      end
    end

    def raw_columns(name)
      with_db { |db| db.execute("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = ?", [name]).first }
    end

    def with_old_table
      path = File.join(@dir, "before-labels.sqlite3")
      SQLite3::Database.new(path).tap { |db| db.execute_batch(old_schema_sql) }.close
      stores = []
      yield ->(**options) { Stores::SQLite.new(path, **options).tap { |store| stores << store } }
    ensure
      stores&.each(&:close)
    end

    def raw_label(name)
      with_db { |db| db.get_first_value("SELECT holder_label FROM lease_machines_resources WHERE name = ?", [name]) }
    end

    def write_raw_label(name, label)
      with_db { |db| db.execute("UPDATE lease_machines_resources SET holder_label = ? WHERE name = ?", [label, name]) }
    end

    # The table has no CHECK constraints: the library validates what it reads.
    def insert_unchecked(name, columns)
      with_db do |db|
        db.execute("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", [name, *columns])
      end
    end

    def delete_row(name)
      with_db { |db| db.execute("DELETE FROM lease_machines_resources WHERE name = ?", [name]) }
    end

    def engine_bad_rows
      { "a leading zero" => ["01", nil, nil, nil, "0"] }
    end

    def create_log_table
      with_db do |db|
        db.execute(<<~SQL)
          CREATE TABLE lm_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT, owner TEXT, status TEXT,
                               token TEXT, expires_at_ns TEXT, observed_ns TEXT)
        SQL
      end
    end

    def log_hook(owner)
      lambda do |commit|
        decision = commit.decision or next
        lease = decision.lease
        commit.connection.execute(
          "INSERT INTO lm_log (resource, owner, status, token, expires_at_ns, observed_ns) VALUES (?, ?, ?, ?, ?, ?)",
          [commit.name, owner.to_s, decision.status.to_s, lease&.token&.to_s, lease&.expires_at_ns&.to_s,
           commit.checkpoint.observed_ns.to_s]
        )
      end
    end

    def read_log(name)
      with_db do |db|
        db.execute("SELECT owner, status, token, expires_at_ns, observed_ns FROM lm_log WHERE resource = ? " \
                   "ORDER BY seq", [name]).map do |owner, status, token, expires_at_ns, observed_ns|
          { owner: Integer(owner), status: status, token: token && Integer(token),
            expires_at_ns: expires_at_ns && Integer(expires_at_ns), observed_ns: Integer(observed_ns) }
        end
      end
    end

    def assert_shipped_schema_installed
      installed = with_db do |db|
        db.get_first_value("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'lease_machines_resources'")
      end
      shipped = Stores::SQLite.schema_sql.sub("CREATE TABLE IF NOT EXISTS", "CREATE TABLE")
      assert_includes shipped, installed, "the table is the shipped statement, word for word"
    end

    # Contention runs on tmpfs when the host has one: the store is the same
    # (WAL, synchronous=FULL, BEGIN IMMEDIATE, one file shared by processes),
    # but a commit does not wait ~4 ms for the disk, so the processes make
    # thousands of decisions in a few seconds. The other tests run on disk.
    def with_contention_database
      shm = "/dev/shm"
      return yield unless File.directory?(shm) && File.writable?(shm)

      dir = Dir.mktmpdir("lease_machines_contended", shm)
      disk = @path
      @path = File.join(dir, "leases.sqlite3")
      Stores::SQLite.new(@path).setup!.close
      yield
    ensure
      @path = disk if disk
      FileUtils.rm_rf(dir) if dir
    end

    # --- SQLite only -------------------------------------------------------------

    # SQLite's own busy_timeout is 0: the store waits for locks in Ruby.
    def test_the_connection_is_wal_with_full_sync_and_no_engine_busy_timeout
      settings = nil
      hook = lambda do |commit|
        db = commit.connection
        settings = %w[journal_mode synchronous busy_timeout].to_h do |pragma|
          [pragma, db.get_first_value("PRAGMA #{pragma}")]
        end
      end
      new_store(busy_timeout: 1.5, before_commit: hook).authority(unique_name).acquire(owner: 1, ttl: 1)
      assert_equal({ "journal_mode" => "wal", "synchronous" => 2, "busy_timeout" => 0 }, settings)
    end

    def test_a_held_write_lock_past_busy_timeout_is_a_store_error
      name = unique_name
      authority = new_store(busy_timeout: 0.2).authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      before = authority.checkpoint
      with_db do |db|
        db.execute("BEGIN IMMEDIATE")
        started = monotonic
        error = assert_raises(StoreError) { authority.reacquire(owner: 1, now: 1.5, ttl: 1) }
        assert_match(/stayed locked for busy_timeout \(200 ms\)/, error.message)
        assert_kind_of SQLite3::BusyException, error.cause
        assert_operator monotonic - started, :<, 3.0
        db.execute("ROLLBACK")
      end
      assert_equal before, authority.checkpoint
      assert_equal 2, authority.reacquire(owner: 1, now: 1.5, ttl: 1).lease.token
    end

    # Waiting for another process's write lock sleeps in Ruby (the GVL is
    # free): the process's other threads keep running meanwhile.
    def test_waiting_for_the_write_lock_leaves_other_threads_running
      name = unique_name
      authority = new_store(busy_timeout: 5).authority(name)
      ticks, holding = hold_lock_in_child("BEGIN IMMEDIATE", 1.0) do
        assert_equal 1, authority.acquire(owner: 1, ttl: 5).lease.token
      end
      assert_operator holding, :>=, 0.8, "the call waited for the other process's lock"
      assert_operator ticks, :>=, 20, "a 10 ms ticker ran #{ticks} times while the call waited #{holding.round(2)} s"

      error = nil
      hold_lock_in_child("BEGIN IMMEDIATE", 1.0) do
        error = assert_raises(StoreError) { new_store(busy_timeout: 0.2).authority(name).release(owner: 1, token: 1) }
      end
      assert_match(/stayed locked for busy_timeout \(200 ms\): database is locked \(nothing was committed\)/,
                   error.message)
      assert_kind_of SQLite3::BusyException, error.cause
      assert_equal 1, authority.checkpoint.lease.owner

      hold_lock_in_child("BEGIN IMMEDIATE", 1.0) do
        started = monotonic
        assert_raises(Timeout::Error) { Timeout.timeout(0.2) { authority.release(owner: 1, token: 1) } }
        assert_operator monotonic - started, :<, 0.6, "Timeout interrupts the wait"
      end
      assert_equal 1, authority.checkpoint.lease.owner
      assert_predicate authority.release(owner: 1, token: 1), :released?, "the interrupted store's next call works"
    end

    # Opening the file (its first read, the WAL switch) waits the same way:
    # here another process holds an exclusive lock on a fresh rollback-journal
    # file.
    def test_opening_a_locked_file_leaves_other_threads_running
      @path = File.join(@dir, "fresh.sqlite3")
      ticks, holding = hold_lock_in_child("BEGIN EXCLUSIVE", 1.0, create: true) do
        Stores::SQLite.new(@path, busy_timeout: 5).setup!.close
      end
      assert_operator holding, :>=, 0.8
      assert_operator ticks, :>=, 20, "a 10 ms ticker ran #{ticks} times while the call waited #{holding.round(2)} s"
      assert_equal 1, new_store.authority("x").acquire(owner: 1, ttl: 1).lease.token
    end

    # Four processes call setup! on the same fresh file at once (released
    # together for each file), over and over.
    def test_concurrent_first_setup_on_fresh_files_succeeds
      processes = 4
      paths = Array.new(100) { |i| File.join(@dir, "fresh-#{i}.sqlite3") }
      go_reader, go_writer = IO.pipe
      ready_reader, ready_writer = IO.pipe
      pids = Array.new(processes) do
        fork_child do
          go_writer.close
          ready_reader.close
          failed = paths.count do |path|
            go_reader.read(1)
            Stores::SQLite.new(path).setup!.close
            false
          rescue StoreError => e
            warn "child #{Process.pid}: #{e.message}"
            true
          ensure
            ready_writer.write("r")
          end
          raise "#{failed} of #{paths.size} setup! calls failed" unless failed.zero?
        end
      end
      go_reader.close
      ready_writer.close
      paths.each do
        go_writer.write("g" * processes)
        break unless ready_reader.wait_readable(30) && ready_reader.read(processes)&.size == processes
      end
      go_writer.close
      statuses = pids.map { |pid| wait_child(pid) }
      assert statuses.all?(&:success?), "every process's setup! succeeded: #{statuses.map(&:exitstatus)}"
      paths.each { |path| assert_empty Stores::SQLite.new(path).statuses }
    ensure
      ready_reader&.close
    end

    def test_an_unreadable_updated_at_is_a_store_error_naming_the_resource
      good = unique_name("a-good")
      bad = unique_name("b-bad")
      store = new_store
      store.authority(good).acquire(owner: 1, ttl: 60)
      store.authority(bad).acquire(owner: 2, ttl: 60)
      with_db { |db| db.execute("UPDATE lease_machines_resources SET updated_at = 'garbage' WHERE name = ?", [bad]) }
      error = assert_raises(StoreError) { store.status(bad) }
      assert_includes error.message, bad.inspect
      assert_includes error.message, "updated_at"

      error = assert_raises(Stores::UnreadableStatusesError) { store.statuses }
      assert_includes error.message, bad.inspect
      assert_equal [good], error.statuses.map(&:name), "the readable resources"
      assert_equal [bad], error.failures.keys
      assert_kind_of StoreError, error.failures.fetch(bad)
      assert_equal 1, error.statuses.first.lease.owner
    ensure
      delete_row(bad) if bad
    end

    # A status says "held" exactly when the next acquire by another owner is
    # refused: both read the clock as max(observed, store clock).
    def test_status_agrees_with_the_next_decision_when_the_clock_steps_back
      now_ms = 10_000
      store = new_store(clock: -> { now_ms })
      name = unique_name
      authority = store.authority(name)
      authority.acquire(owner: 1, ttl: 5)
      now_ms = 16_000
      authority.release(owner: 2, token: 7)
      now_ms = 14_000
      status = store.status(name)
      refute_predicate status, :held?, "observed is 16 s, past the expiry at 15 s"
      assert_in_delta(-1.0, status.expires_in, 1e-9)
      assert_equal 2, authority.acquire(owner: 3, ttl: 5).lease.token, "the next acquire is granted"
      now_ms = 17_000
      assert_predicate store.status(name), :held?
    end

    def test_a_store_clock_that_steps_back_never_revives_or_shortens_a_lease
      now_ms = 10_000
      authority = new_store(clock: -> { now_ms }).authority(unique_name)
      assert_equal 15.0, authority.acquire(owner: 1, ttl: 5).lease.expires_at
      now_ms = 9_000
      assert_equal 15.0, authority.renew(owner: 1, token: 1, ttl: 1).lease.expires_at, "never shortened"
      now_ms = 16_000
      assert_equal Decision.rejected(:stale_token), authority.release(owner: 2, token: 7)
      now_ms = 14_000
      assert_equal Decision.rejected(:expired), authority.renew(owner: 1, token: 1, ttl: 5), "never revived"
      assert_equal 16.0, authority.checkpoint.observed
    end

    # A grant is decided on the row read outside any transaction and written by a compare-and-set. Another
    # store's grant made between that read and the write (here from inside the first store's clock, which it
    # reads right after the row) must make the first read again and be refused, never overwrite the grant.
    def test_a_grant_landing_between_the_read_and_the_write_is_not_overwritten
      name = unique_name
      new_store.authority(name).tap { |created| created.release(owner: 9, token: created.acquire(owner: 9, ttl: 5).lease.token) }
      other = new_store.authority(name)
      raced = nil
      armed = false
      clock = lambda do
        raced ||= other.acquire(owner: 2, ttl: 30) if armed
        Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
      end
      store = new_store(clock: clock)
      store.status(name) # the table's columns are asked once, here: the next clock read follows the row's
      armed = true
      decision = store.authority(name).acquire(owner: 1, ttl: 30)
      assert_predicate raced, :granted?
      refute_predicate decision, :granted?, "the row changed after the read: read again, it is occupied"
      status = new_store.status(name)
      assert_equal [2, raced.lease.token], [status.lease.owner, status.lease.token], "the racing grant stands"
    end

    def test_a_bad_clock_raises_and_writes_nothing
      name = unique_name
      store = new_store(clock: -> { 1.5 })
      error = assert_raises(TypeError) { store.authority(name).acquire(owner: 1, ttl: 1) }
      assert_match(/\Aclock must return Integer milliseconds since the Unix epoch/, error.message)
      assert_nil new_store.status(name)
      assert_raises(TypeError) { new_store(clock: 5) }
    end

    def test_a_failed_commit_that_leaves_the_transaction_open_is_a_store_error
      name = unique_name
      authority = new_store.authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      before = authority.checkpoint
      with_db do |db|
        db.execute_batch(<<~SQL)
          CREATE TABLE lm_parent (id INTEGER PRIMARY KEY);
          CREATE TABLE lm_child (parent INTEGER REFERENCES lm_parent (id) DEFERRABLE INITIALLY DEFERRED);
        SQL
      end
      store = new_store(before_commit: ->(commit) { commit.connection.execute("INSERT INTO lm_child VALUES (42)") })
      store.__send__(:database).execute("PRAGMA foreign_keys = ON")
      error = assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 1.5, ttl: 1) }
      refute_kind_of OutcomeUnknownError, error, "SQLite kept the transaction open: it certainly did not commit"
      assert_equal before, authority.checkpoint
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token
    end

    def test_a_commit_whose_outcome_is_unknown_never_returns_the_decision
      name = unique_name
      store = new_store(before_commit: ->(commit) { commit.connection.execute("COMMIT") })
      error = assert_raises(OutcomeUnknownError) { store.authority(name).acquire(owner: 1, now: 1, ttl: 1) }
      assert_match(/may or may not have been committed/, error.message)
      # Here the transaction did commit (the hook committed it): the history
      # goes on from it, and the grant nobody saw simply expires.
      assert_equal 1, new_store.authority(name).checkpoint.last_issued
      assert_equal 2, new_store.authority(name).acquire(owner: 2, now: 3, ttl: 1).lease.token
    end

    def test_the_path_is_validated
      assert_raises(ArgumentError) { Stores::SQLite.new(":memory:") }
      assert_raises(ArgumentError) { Stores::SQLite.new("") }
      assert_raises(TypeError) { Stores::SQLite.new(nil) }
      assert_raises(ArgumentError) { Stores::SQLite.new(@path, busy_timeout: -1) }
      assert_equal @path, Stores::SQLite.new(Pathname(@path)).path
    end

    def test_an_unwritable_database_is_a_store_error
      store = Stores::SQLite.new(File.join(@dir, "missing", "leases.sqlite3"))
      error = assert_raises(StoreError) { store.authority("x").acquire(owner: 1, ttl: 1) }
      assert_match(/cannot open the database/, error.message)
      FileUtils.rm_f(@path)
      error = assert_raises(StoreError) { new_store.authority("x").checkpoint }
      assert_match(/no such table: lease_machines_resources/, error.message)
    end

    def test_a_readonly_store_reads_and_never_writes_or_creates
      new_store.authority("held").acquire(owner: 7, ttl: 60)
      store = new_store(readonly: true)
      assert_equal 7, store.status("held").lease.owner
      assert_equal ["held"], store.statuses.map(&:name)
      error = assert_raises(StoreError) { store.authority("free").acquire(owner: 8, ttl: 60) }
      assert_match(/readonly/, error.message)
      assert_nil new_store.status("free")
      assert_raises(TypeError) { new_store(readonly: "yes") }

      missing = File.join(@dir, "missing.sqlite3")
      error = assert_raises(StoreError) { Stores::SQLite.new(missing, readonly: true).statuses }
      assert_match(/cannot open the database/, error.message)
      refute File.exist?(missing)

      app = File.join(@dir, "app.sqlite3")
      SQLite3::Database.new(app) { |db| db.execute_batch(Stores::SQLite.schema_sql) }
      assert_equal [], Stores::SQLite.new(app, readonly: true).statuses
      SQLite3::Database.new(app) { |db| assert_equal "delete", db.get_first_value("PRAGMA journal_mode") }
    end

    def test_a_path_that_is_not_utf8_is_its_bytes
      path = File.join(@dir.b, "caf\xE9.sqlite3".b)
      store = Stores::SQLite.new(path).setup!
      assert_equal 1, store.authority("x").acquire(owner: 1, ttl: 60).lease.token
      assert_includes Dir.children(@dir).map(&:b), "caf\xE9.sqlite3".b
      error = assert_raises(StoreError) { Stores::SQLite.new("#{path}/nope".b).statuses }
      assert_includes error.message, "caf\\xE9.sqlite3/nope"
    ensure
      store&.close
    end

    private

    # A child process opens the file, runs `begin_sql` and holds the lock for
    # `seconds`; meanwhile the block runs with a 10 ms ticker thread beside
    # it. @return [[Integer, Float]] the ticks, and how long the block took
    def hold_lock_in_child(begin_sql, seconds, create: false)
      reader, writer = IO.pipe
      pid = fork_child do
        reader.close
        db = SQLite3::Database.new(@path)
        db.execute(begin_sql)
        db.execute("CREATE TABLE IF NOT EXISTS lm_hold (x)") if create
        writer.write("x")
        sleep seconds
        db.execute("ROLLBACK")
        db.close
      end
      writer.close
      read_within(reader, 1)
      ticks = 0
      ticker = Thread.new { loop { sleep 0.01; ticks += 1 } } # rubocop:disable Style/Semicolon
      started = monotonic
      yield
      [ticks, monotonic - started]
    ensure
      ticker&.kill&.join
      assert_child_succeeded(pid) if pid
      reader&.close
    end

    def with_db
      db = SQLite3::Database.new(@path)
      db.busy_timeout = 5_000
      yield db
    ensure
      db&.close
    end
  end
end
