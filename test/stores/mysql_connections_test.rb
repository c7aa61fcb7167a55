# frozen_string_literal: true

require_relative "server_active_record_cases"
require_relative "../support/mysql_server"
require "lease_machines/stores/mysql"
require "active_record"

module LeaseMachines
  # Where the MySQL store's connections come from: a Mysql2::Client, a URL, a
  # pool, and ActiveRecord's mysql2 adapter (6.1+), against the real server.
  class MySQLConnectionsTest < Minitest::Test
    include ServerActiveRecordCases

    # The smallest pool: anything with `with { |client| }`.
    class TinyPool
      def initialize(clients)
        @clients = Queue.new
        clients.each { |client| @clients << client }
      end

      def with
        client = @clients.pop
        yield client
      ensure
        @clients << client if client
      end
    end

    def setup
      @url = MySQLServer.url
      @admin = MySQLServer.connect
      @clients = [@admin]
    end

    def teardown
      @clients.each { |client| client.close unless client.closed? }
      ActiveRecord::Base.connection_pool.disconnect! if ActiveRecord::Base.connected?
    end

    def client
      MySQLServer.connect.tap { |client| @clients << client }
    end

    def test_a_client_a_url_and_a_pool_share_one_history
      name = unique_name("kinds")
      shared = Stores::MySQL.new(client)
      owned = Stores::MySQL.new(@url)
      pooled = Stores::MySQL.new(TinyPool.new([client, client]))
      assert_equal 1, shared.authority(name).acquire(owner: 1, now: 1, ttl: 1).lease.token
      assert_equal 2, owned.authority(name).reacquire(owner: 1, now: 1.5, ttl: 1).lease.token
      assert_equal 3, pooled.authority(name).reacquire(owner: 1, now: 1.7, ttl: 1).lease.token
      assert_equal owned.authority(name).checkpoint, pooled.authority(name).checkpoint
      owned.close
    end

    def test_a_closed_client_is_refused
      closed = client
      closed.close
      error = assert_raises(StoreError) { Stores::MySQL.new(closed).authority("x").acquire(owner: 1, ttl: 1) }
      assert_match(/closed/, error.message)
    end

    def test_connection_arguments_are_validated
      error = assert_raises(TypeError) { Stores::MySQL.new(42) }
      assert_match(%r{connection must be a Mysql2::Client, a mysql2:// URL String}, error.message)
      error = assert_raises(ArgumentError) { Stores::MySQL.new("postgres://u:secret@h/db") }
      assert_match(%r{must start with mysql2://.*"postgres://u:\*\*\*@h/db"}, error.message)
      refute_match(/secret/, error.message)
      error = assert_raises(ArgumentError) { Stores::MySQL.new("#{@url}?read_timeout=soon") }
      assert_equal 'connection URL option read_timeout must be a positive whole number of seconds, got "soon"',
                   error.message
      error = assert_raises(ArgumentError) { Stores::MySQL.new("#{@url}?reconnect=true") }
      assert_match(/option "reconnect" is not one the MySQL store knows/, error.message)
      error = assert_raises(TypeError) { Stores::MySQL.new(TinyPool.new([42])).authority("x").acquire(owner: 1, ttl: 1) }
      assert_match(/expected a Mysql2::Client/, error.message)
    end

    def test_a_url_with_options_and_an_unreachable_server
      store = Stores::MySQL.new("#{@url}?connect_timeout=2&read_timeout=10")
      assert_predicate store.authority(unique_name).acquire(owner: 1, ttl: 1), :granted?
      store.close
      down = Stores::MySQL.new("mysql2://root@127.0.0.1:1/nothing?connect_timeout=1")
      error = assert_raises(StoreError) { down.authority("x").acquire(owner: 1, ttl: 1) }
      assert_match(/\AMySQL connection unavailable: /, error.message)
    end

    # --- ActiveRecord's mysql2 adapter --------------------------------------------

    def store_class = Stores::MySQL

    def connect_active_record
      ActiveRecord::Base.establish_connection(@url)
    end

    def test_a_decision_inside_an_active_record_transaction_commits_on_its_own
      connect_active_record
      ActiveRecord::Base.connection.execute("CREATE TABLE IF NOT EXISTS lm_scratch (id INT) ENGINE = InnoDB")
      name = unique_name("ar-nested")
      store = Stores::MySQL.new(ActiveRecord::Base)
      decision = nil
      ActiveRecord::Base.transaction do
        ActiveRecord::Base.connection.execute("INSERT INTO lm_scratch VALUES (1)")
        decision = store.authority(name).acquire(owner: 1, now: 1, ttl: 5)
        assert ActiveRecord::Base.connection.transaction_open?, "the caller's transaction is untouched"
        raise ActiveRecord::Rollback
      end
      assert_predicate decision, :granted?
      assert_equal decision.lease, Stores::MySQL.new(@admin).authority(name).checkpoint.lease,
                   "the decision was committed before it was returned, whatever the caller's transaction did"
      assert_equal 0, ActiveRecord::Base.connection.select_value("SELECT COUNT(*) FROM lm_scratch"),
                   "the caller's transaction was rolled back as the caller asked"
    end

    # The fast path's write lost with its ActiveRecord connection, whose
    # reconnect fails too (its user was dropped meanwhile): the outcome is
    # still unknown (the server may have run the write); the failed
    # reconnect is left for the next call.
    def test_a_write_lost_while_active_record_cannot_reconnect_is_outcome_unknown
      user = "lm_ar_#{SecureRandom.hex(3)}"
      @admin.query("CREATE USER '#{user}'@'%' IDENTIFIED BY 'lm-test'")
      @admin.query("GRANT ALL ON #{MySQLServer.database}.* TO '#{user}'@'%'")
      uri = URI.parse(@url)
      uri.user = user
      uri.password = "lm-test"
      ActiveRecord::Base.establish_connection(uri.to_s)
      name = unique_name("ar-lost-write")
      authority = Stores::MySQL.new(ActiveRecord::Base.connection).authority(name)
      authority.acquire(owner: 1, now: 1, ttl: 1)
      id = ActiveRecord::Base.connection.raw_connection.thread_id
      @admin.query("DROP USER '#{user}'@'%'")
      locker = client
      locker.query("START TRANSACTION")
      locker.query("SELECT 1 FROM lease_machines_resources WHERE name = '#{locker.escape(name)}' FOR UPDATE")
      caller = Thread.new do
        authority.reacquire(owner: 1, now: 2, ttl: 1)
      rescue StandardError => e
        e
      end
      # The write, blocked by the locker (the read before it, which does not
      # wait, may show for a moment: killed there, nothing was written).
      wait_for do
        @admin.query("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = #{id} AND COMMAND = 'Query' " \
                     "AND INFO LIKE 'UPDATE lease_machines_resources %'").any?
      end
      @admin.query("KILL CONNECTION #{id}")
      locker.query("ROLLBACK")
      assert_kind_of OutcomeUnknownError, caller.value
    ensure
      @admin.query("DROP USER IF EXISTS '#{user}'@'%'")
    end

    def test_a_dead_active_record_connection_costs_one_store_error_then_reconnects
      connect_active_record
      name = unique_name("ar-dead")
      store = Stores::MySQL.new(ActiveRecord::Base)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      id = ActiveRecord::Base.connection.raw_connection.thread_id
      @admin.query("KILL CONNECTION #{id}")
      sleep 0.01 until @admin.query("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = #{id}").count.zero?
      assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
      assert_equal 1, ActiveRecord::Base.connection.select_value("SELECT 1"),
                   "the failed call reconnected ActiveRecord's connection through the adapter"
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
      assert_equal 1, ActiveRecord::Base.connection.select_value("SELECT 1"), "ActiveRecord's connection works again"
    end
  end
end
