# frozen_string_literal: true

require_relative "store_contract"
require_relative "server_session_cases"
require_relative "deadline_cases"
require_relative "../support/mysql_server"
require "lease_machines/stores/mysql"

module LeaseMachines
  # The MySQL store (MariaDB on the host; MySQL through script/matrix) against
  # the real server: the store contract, then what only this engine has.
  class MySQLStoreTest < Minitest::Test
    include StoreContract
    include ServerSessionCases
    include DeadlineCases

    COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"

    def setup
      @url = MySQLServer.url
      @admin = MySQLServer.connect
      @monitor = MySQLServer.connect
      @clients = [@admin, @monitor]
      @stores = []
    end

    def teardown
      @stores&.each(&:close)
      @clients&.each { |client| client.close unless client.closed? }
    end

    # --- what the contract needs ----------------------------------------------

    def new_store(**options)
      Stores::MySQL.new(@url, **options).tap { |store| @stores << store }
    end

    def engine_connection_class
      Mysql2::Client
    end

    def engine
      :mysql
    end

    def admin_query(sql, *values)
      @admin.query(format(sql, *values.map { |value| literal(value) }), as: :array, cast: false).to_a
    end

    def literal(value)
      value.nil? ? "NULL" : "'#{@admin.escape(value.to_s)}'"
    end

    def raw_row(name)
      values = admin_query("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = %s", name).first
      U64_COLUMNS.zip(values).to_h
    end

    def insert_row(name, last_issued: nil, owner: nil, token: nil, expires_at_ns: nil, observed_ns: 0)
      insert_unchecked(name, [last_issued, owner, token, expires_at_ns, observed_ns].map { |v| v&.to_s })
    end

    def raw_columns(name)
      admin_query("SELECT #{COLUMNS} FROM lease_machines_resources WHERE name = %s", name).first
    end

    def with_old_table
      database = MySQLServer.scratch_database
      MySQLServer.connect(database: database).tap { |client| client.query(old_schema_sql) }.close
      url = URI.parse(@url).tap { |uri| uri.path = "/#{database}" }.to_s
      yield ->(**options) { Stores::MySQL.new(url, **options).tap { |store| @stores << store } }
    end

    def raw_label(name)
      admin_query("SELECT holder_label FROM lease_machines_resources WHERE name = %s", name).dig(0, 0)
        &.force_encoding(Encoding::UTF_8)
    end

    def write_raw_label(name, label)
      admin_query("UPDATE lease_machines_resources SET holder_label = %s WHERE name = %s", label, name)
    end

    # The table has no CHECK constraints and DECIMAL(20,0) holds -1 and 2**64
    # as written: the library validates what it reads.
    def insert_unchecked(name, columns)
      admin_query("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                  name, *columns)
    end

    def delete_row(name)
      admin_query("DELETE FROM lease_machines_resources WHERE name = %s", name)
    end

    def engine_bad_rows
      {}
    end

    def create_log_table
      @admin.query(<<~SQL)
        CREATE TABLE IF NOT EXISTS lm_log (
          seq BIGINT AUTO_INCREMENT PRIMARY KEY, resource VARBINARY(255), owner DECIMAL(20,0), status VARCHAR(16),
          token DECIMAL(20,0), expires_at_ns DECIMAL(20,0), observed_ns DECIMAL(20,0)) ENGINE = InnoDB
      SQL
    end

    # The hook writes in the decision's transaction while it holds the row
    # lock, so the AUTO_INCREMENT order is the commit order.
    def log_hook(owner)
      lambda do |commit|
        decision = commit.decision or next
        lease = decision.lease
        values = [commit.name, owner, decision.status, lease&.token, lease&.expires_at_ns,
                  commit.checkpoint.observed_ns].map { |value| value.nil? ? "NULL" : "'#{commit.connection.escape(value.to_s)}'" }
        commit.connection.query("INSERT INTO lm_log (resource, owner, status, token, expires_at_ns, observed_ns) " \
                                "VALUES (#{values.join(', ')})")
      end
    end

    def read_log(name)
      admin_query("SELECT owner, status, token, expires_at_ns, observed_ns FROM lm_log WHERE resource = %s " \
                  "ORDER BY seq", name).map do |owner, status, token, expires_at_ns, observed_ns|
        { owner: Integer(owner), status: status, token: token && Integer(token),
          expires_at_ns: expires_at_ns && Integer(expires_at_ns), observed_ns: Integer(observed_ns) }
      end
    end

    def assert_shipped_schema_installed
      columns = admin_query("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS " \
                            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'lease_machines_resources'").to_h
      U64_COLUMNS.each { |column| assert_equal "decimal(20,0)", columns.fetch(column) }
      assert_equal "varbinary(255)", columns.fetch("name")
      engine, = admin_query("SELECT ENGINE FROM information_schema.TABLES " \
                            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'lease_machines_resources'").first
      assert_equal "InnoDB", engine
      keys = admin_query("SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() " \
                         "AND TABLE_NAME = 'lease_machines_resources' AND CONSTRAINT_NAME = 'PRIMARY'")
      assert_equal [["name"]], keys
    end

    def hold_row_lock(name)
      @admin.query("START TRANSACTION")
      admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", name)
      yield
    ensure
      @admin.query("ROLLBACK")
    end

    # --- MySQL only ------------------------------------------------------------

    # KILL CONNECTION from another session while the decision's transaction
    # waits in its hook, just before COMMIT: COMMIT fails on a lost connection,
    # which is an unknown outcome (here nothing was committed).
    def test_a_connection_killed_just_before_commit_raises_outcome_unknown
      name = unique_name("killed-conn")
      baseline = new_store.authority(name)
      baseline.acquire(owner: 1, now: 100, ttl: 10)
      before = baseline.checkpoint
      armed = true
      hook = lambda do |commit|
        next unless armed

        armed = false
        kill(commit.connection.thread_id)
      end
      store = new_store(before_commit: hook)

      error = assert_raises(OutcomeUnknownError) { store.authority(name).reacquire(owner: 1, now: 101, ttl: 10) }
      assert_kind_of Mysql2::Error, error.cause
      assert_match(/during COMMIT/, error.message)
      assert_equal before, baseline.checkpoint, "the connection died before COMMIT: nothing was committed"
      granted = store.authority(name).reacquire(owner: 1, now: 102, ttl: 10)
      assert_equal 2, granted.lease.token, "the same store reconnects and the history goes on"
    end

    # A batch's renewed rows are written by one statement, counted by the
    # server on the store's own session (not one UPDATE per row), in the
    # batch's one transaction, each row its renewal's to the last digit of a
    # u64.
    def test_a_batch_writes_its_renewed_rows_with_one_statement
      client = MySQLServer.connect
      @clients << client
      store = Stores::MySQL.new(client)
      names = Array.new(5) { |index| unique_name("batch-one-statement-#{index}") }
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 30).lease }
      top = (2**64) - 1
      admin_query("UPDATE lease_machines_resources SET last_issued = %s, lease_owner = %s, lease_token = %s " \
                  "WHERE name = %s", top, top, top, names.first)
      renewals = names.zip(leases).map { |name, lease| { name: name, owner: lease.owner, token: lease.token, ttl: 60 } }
      renewals.first.merge!(owner: top, token: top)

      decisions, counted = counting_statements(client) { store.renew_all(renewals) }

      assert_equal 1, counted.delete("com_commit"), "one transaction"
      assert_equal 1, counted.values.sum, "one write statement for the #{names.size} rows: #{counted.inspect}"
      assert_equal %i[renewed] * names.size, decisions.map(&:status)
      names.zip(renewals, decisions, leases) do |name, renewal, decision, lease|
        assert_equal [renewal[:owner], renewal[:token]], [decision.lease.owner, decision.lease.token]
        assert_operator decision.lease.expires_at_ns, :>, lease.expires_at_ns
        assert_equal decision.lease, new_store.authority(name).checkpoint.lease, "#{name}: committed as decided"
      end
      assert_equal top.to_s, raw_row(names.first).fetch("lease_token")
    end

    # A batch of more rows than one statement takes is written by as few
    # statements as it needs, all in its one transaction.
    def test_a_batch_larger_than_one_statement_takes
      per_statement = Stores::MySQL.const_get(:LockedTransaction)::WRITE_ALL_ROWS
      names = Array.new(per_statement + 1) { |index| unique_name("batch-large-#{index}") }
      expires_at_ns = (Time.now.to_i + 10) * 1_000_000_000
      @admin.query("INSERT INTO lease_machines_resources (name, #{COLUMNS}) VALUES " +
                   names.map { |name| "(#{literal(name)}, 1, 1, 1, #{expires_at_ns}, 0)" }.join(", "))
      client = MySQLServer.connect
      @clients << client
      store = Stores::MySQL.new(client)

      decisions, counted = counting_statements(client) do
        store.renew_all(names.map { |name| { name: name, owner: 1, token: 1, ttl: 60 } })
      end

      assert_equal 1, counted.delete("com_commit"), "one transaction"
      assert_equal 2, counted.values.sum, "#{per_statement} rows, then 1: #{counted.inspect}"
      assert_equal [:renewed], decisions.map(&:status).uniq
      [names.first, names.last].zip([decisions.first, decisions.last]) do |name, decision|
        assert_operator decision.lease.expires_at_ns, :>, expires_at_ns
        assert_equal decision.lease, new_store.authority(name).checkpoint.lease
      end
    end

    # The block's value, and how many statements of each kind that writes or
    # commits `client`'s session sent while it ran (the server's counters).
    def counting_statements(client)
      counters = lambda do
        client.query("SHOW SESSION STATUS WHERE Variable_name IN ('Com_update', 'Com_update_multi', 'Com_insert', " \
                     "'Com_insert_select', 'Com_replace', 'Com_delete', 'Com_delete_multi', 'Com_commit')",
                     as: :array).to_h { |variable, value| [variable.downcase, Integer(value, 10)] }
      end
      before = counters.call
      value = yield
      [value, counters.call.to_h { |variable, count| [variable, count - before.fetch(variable)] }]
    end

    # The batch's one statement failing (a trigger refuses one of its rows)
    # is a failure of every renewal in it: renew_all raises, nothing of the
    # batch is committed, never a success.
    def test_a_failed_batch_statement_fails_every_renewal_and_commits_none
      database = MySQLServer.scratch_database
      store = Stores::MySQL.new(URI.parse(@url).tap { |uri| uri.path = "/#{database}" }.to_s).setup!
      @stores << store
      names = Array.new(3) { |index| "batch-refused-#{index}" }
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 30).lease }
      renewals = names.zip(leases).map { |name, lease| { name: name, owner: 1, token: lease.token, ttl: 60 } }
      client = MySQLServer.connect(database: database)
      @clients << client
      client.query("CREATE TRIGGER lm_refuse_one BEFORE UPDATE ON lease_machines_resources FOR EACH ROW " \
                   "IF NEW.name = '#{names[1]}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by a trigger'; " \
                   "END IF")

      error = assert_raises(StoreError) { store.renew_all(renewals) }

      refute_kind_of OutcomeUnknownError, error, "refused before COMMIT: certainly not committed"
      assert_match(/refused by a trigger/, error.message)
      assert_equal leases, names.map { |name| store.authority(name).checkpoint.lease }, "nothing of the batch"
    end

    # On a table made before labels (no label columns) a batch writes as on
    # any other: its statement names none of them.
    def test_a_batch_on_a_table_made_before_labels
      with_old_table do |open_store|
        store = open_store.call
        names = Array.new(3) { |index| "batch-unlabelled-#{index}" }
        leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 30, label: "not stored").lease }
        renewals = names.zip(leases).map { |name, lease| { name: name, owner: 1, token: lease.token, ttl: 60 } }

        decisions = store.renew_all(renewals)

        assert_equal %i[renewed] * 3, decisions.map(&:status)
        assert_equal(decisions.map(&:lease), names.map { |name| store.authority(name).checkpoint.lease })
      end
    end

    # The fast path from many processes at once on one resource: every
    # reacquire by the same owner is granted a new token, so when every write
    # lands only on the row its decision read, the tokens returned are
    # exactly 1..last_issued, each once.
    def test_fast_path_compare_and_set_from_many_processes_loses_no_grant
      name = unique_name("fast-contended")
      results_reader, results_writer = IO.pipe
      pids = Array.new(4) do
        fork_child do
          results_reader.close
          authority = new_store.authority(name)
          tokens = Array.new(60) { authority.reacquire(owner: 1, now: 5, ttl: 1).lease.token }
          results_writer.puts(tokens.join(","))
        end
      end
      results_writer.close
      pids.each { |pid| assert_child_succeeded(pid, timeout: 60) }
      tokens = results_reader.read.split(/[,\n]/).map { |token| Integer(token, 10) }
      assert_equal 240, tokens.size
      assert_equal (1..240).to_a, tokens.sort, "each grant got its own token, and every one was committed"
      assert_equal 240, new_store.authority(name).checkpoint.last_issued
    ensure
      results_reader&.close
    end

    # Killed while waiting for the row lock: before COMMIT, so nothing was
    # committed (StoreError, not an unknown outcome).
    def test_a_connection_killed_while_waiting_for_the_row_lock_is_a_store_error
      name = unique_name("lock-wait")
      baseline = new_store.authority(name)
      baseline.acquire(owner: 1, now: 100, ttl: 10)
      before = baseline.checkpoint
      ids = []
      store = new_store(before_commit: ->(commit) { ids << commit.connection.thread_id })
      store.authority(unique_name).acquire(owner: 1, ttl: 1) # opens the connection, and tells its id
      @admin.query("START TRANSACTION")
      admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", name)
      caller = Thread.new do
        store.authority(name).reacquire(owner: 1, now: 101, ttl: 10)
      rescue StandardError => e
        e
      end
      wait_for { lock_waiting?(ids.first) }
      kill(ids.first)
      error = caller.value
      @admin.query("ROLLBACK")
      assert_kind_of StoreError, error
      refute_kind_of OutcomeUnknownError, error, "the transaction never reached COMMIT"
      assert_equal before, baseline.checkpoint
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 102, ttl: 10).lease.token
    end

    # The fast path's write commits on its own: killed while it waits for the
    # row lock, its outcome is unknown (the server may have run it).
    def test_a_connection_killed_during_the_fast_write_raises_outcome_unknown
      name = unique_name("fast-kill")
      store = new_store
      authority = store.authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      id = connection_id(store)
      @admin.query("START TRANSACTION")
      admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", name)
      caller = Thread.new do
        authority.reacquire(owner: 1, now: 2, ttl: 1)
      rescue StandardError => e
        e
      end
      wait_for { lock_waiting?(id) }
      kill(id)
      @admin.query("ROLLBACK")
      error = caller.value
      assert_kind_of OutcomeUnknownError, error
      assert_equal 2, authority.reacquire(owner: 1, now: 3, ttl: 1).lease.token, "nothing was written; it goes on"
    end

    def test_a_connection_lost_between_calls_costs_one_store_error_then_reconnects
      name = unique_name("lost")
      store = new_store
      authority = store.authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      kill(connection_id(store))
      error = assert_raises(StoreError) { authority.reacquire(owner: 1, now: 2, ttl: 1) }
      refute_kind_of OutcomeUnknownError, error, "the read failed: nothing was written"
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token
    end

    # A lock wait that outlasts innodb_lock_wait_timeout is a StoreError, and
    # nothing was committed.
    def test_a_lock_wait_timeout_is_a_store_error
      name = unique_name("lock-timeout")
      new_store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      client = MySQLServer.connect(init_command: "SET SESSION innodb_lock_wait_timeout = 1")
      @clients << client
      @admin.query("START TRANSACTION")
      admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", name)
      [Stores::MySQL.new(client), Stores::MySQL.new(client, before_commit: ->(_commit) {})].each do |store|
        error = assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
        refute_kind_of OutcomeUnknownError, error
        assert_match(/Lock wait timeout/, error.message)
        assert_equal Errors::LOCK_WAIT_TIMEOUT, error.cause.error_number
      end
      @admin.query("ROLLBACK")
      assert_equal 2, Stores::MySQL.new(client).authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
    ensure
      @admin.query("ROLLBACK")
    end

    # A deadlock rolls the whole transaction back; the store runs it again.
    def test_a_deadlock_in_the_hook_runs_the_transaction_again
      name = unique_name("deadlock")
      other = unique_name("deadlock-other")
      new_store.authority(other).acquire(owner: 1, now: 1, ttl: 1)
      @admin.query("CREATE TABLE IF NOT EXISTS lm_heavy (id INT PRIMARY KEY) ENGINE = InnoDB")
      attempts = 0
      hook = lambda do |commit|
        attempts += 1
        next unless attempts == 1

        # The admin session holds `other` and waits for `name`, which this
        # transaction holds; this transaction then asks for `other`. The
        # admin's transaction has written more rows, so InnoDB picks this one
        # as the victim.
        @admin.query("START TRANSACTION")
        @admin.query("INSERT INTO lm_heavy (id) VALUES #{Array.new(200) { |i| "(#{i})" }.join(', ')}")
        admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", other)
        waiter = Thread.new do
          admin_query("SELECT 1 FROM lease_machines_resources WHERE name = %s FOR UPDATE", name)
        rescue Mysql2::Error => e
          e
        end
        wait_for { lock_waiting?(@admin.thread_id) }
        commit.connection.query("SELECT 1 FROM lease_machines_resources WHERE name = X'#{other.unpack1('H*')}' " \
                                "FOR UPDATE")
      ensure
        if waiter
          waiter.join
          @admin.query("ROLLBACK")
        end
      end
      decision = new_store(before_commit: hook).authority(name).acquire(owner: 3, now: 5, ttl: 1)
      assert_predicate decision, :granted?
      assert_operator attempts, :>=, 2, "the deadlocked transaction ran again"
      assert_equal 1, new_store.authority(name).checkpoint.last_issued
    end

    def test_setup_refuses_a_table_that_is_not_innodb
      database = MySQLServer.scratch_database
      client = MySQLServer.connect(database: database)
      @clients << client
      client.query(Stores::MySQL.schema_sql.sub("ENGINE = InnoDB", "ENGINE = MyISAM"))
      error = assert_raises(StoreError) { Stores::MySQL.new(client).setup! }
      assert_match(/uses the "MyISAM" engine; the store needs InnoDB/, error.message)
      client.query("ALTER TABLE lease_machines_resources ENGINE = InnoDB")
      store = Stores::MySQL.new(client)
      assert_same store, store.setup!
    end

    def test_a_missing_table_says_to_run_setup
      database = MySQLServer.scratch_database
      client = MySQLServer.connect(database: database)
      @clients << client
      error = assert_raises(StoreError) { Stores::MySQL.new(client).authority("x").acquire(owner: 1, ttl: 1) }
      assert_match(/store\.setup!/, error.message)
    end

    # REPEATABLE READ (the default) with autocommit off would keep one
    # snapshot and commit nothing: the fast path refuses such a session.
    def test_a_session_with_autocommit_off_is_refused
      client = MySQLServer.connect
      @clients << client
      client.query("SET autocommit = 0")
      name = unique_name
      error = assert_raises(StoreError) { Stores::MySQL.new(client).authority(name).acquire(owner: 1, ttl: 1) }
      assert_match(/autocommit is off/, error.message)
      client.query("ROLLBACK")
      assert_nil new_store.status(name)
    end

    # Decisions from the fast path and from locked transactions interleave on
    # a SERIALIZABLE session and a REPEATABLE READ one: each sees the row the
    # previous one committed.
    def test_isolation_levels_do_not_change_the_history
      name = unique_name("isolation")
      serializable = MySQLServer.connect(init_command: "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
      @clients << serializable
      stores = [Stores::MySQL.new(serializable), Stores::MySQL.new(serializable, before_commit: ->(_commit) {}),
                new_store, new_store(before_commit: ->(_commit) {})]
      tokens = Array.new(20) { |step| stores[step % 4].authority(name).reacquire(owner: 1, now: step, ttl: 1).lease.token }
      assert_equal (1..20).to_a, tokens
    end

    private

    Errors = Stores::MySQL.const_get(:Errors)

    # Ends a connection from the monitor session and waits until it is gone.
    # Statements of the server still writing a resource row (the
    # processlist: information_schema.innodb_trx is a cache that polling
    # faster than every 0.1 s never lets refresh).
    def lock_waiters
      @monitor.query("SELECT COUNT(*) FROM information_schema.processlist " \
                     "WHERE info LIKE 'UPDATE lease_machines_resources%'", as: :array).first.first.to_i
    end

    def kill(id)
      @monitor.query("KILL CONNECTION #{Integer(id)}")
      wait_for { @monitor.query("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = #{Integer(id)}").none? }
    end

    # Whether a connection is running a statement on the resources table
    # (asked by the monitor session): the tests call it while the row it
    # needs is locked, so it is waiting for that lock.
    def lock_waiting?(id)
      @monitor.query("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = #{Integer(id)} " \
                     "AND COMMAND = 'Query' AND INFO LIKE '%lease_machines_resources%'").any?
    end

    # The server's id of the connection a store opened from its URL.
    def connection_id(store)
      store.instance_variable_get(:@connections).with { |session| session.connection.thread_id }
    end
    alias server_session connection_id
  end
end
