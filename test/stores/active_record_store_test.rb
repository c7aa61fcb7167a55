# frozen_string_literal: true

require_relative "server_active_record_cases"

module LeaseMachines
  # The PostgreSQL store through ActiveRecord (6.1+, the pg adapter), against
  # the real server: a Rails app reuses its own pool.
  class ActiveRecordStoreTest < Minitest::Test
    include ServerActiveRecordCases

    def setup
      @url = StoreTestHelper::PostgresServer.url
      connect_active_record
      @admin = StoreTestHelper::PostgresServer.connect
    end

    def store_class = Stores::Postgres

    def connect_active_record
      ActiveRecord::Base.establish_connection(@url) unless ActiveRecord::Base.connected?
    end

    def teardown
      @admin&.close
      ActiveRecord::Base.connection_pool.disconnect!
    end

    def test_a_decision_inside_an_active_record_transaction_commits_on_its_own
      name = unique_name("ar-nested")
      store = Stores::Postgres.new(ActiveRecord::Base)
      decision = nil
      ActiveRecord::Base.transaction do
        ActiveRecord::Base.connection.execute("CREATE TEMP TABLE lm_scratch (id int)")
        decision = store.authority(name).acquire(owner: 1, now: 1, ttl: 5)
        assert ActiveRecord::Base.connection.transaction_open?, "the caller's transaction is untouched"
        raise ActiveRecord::Rollback
      end
      assert_predicate decision, :granted?
      assert_equal decision.lease, Stores::Postgres.new(@admin).authority(name).checkpoint.lease,
                   "the decision was committed before it was returned, whatever the caller's transaction did"
      assert_nil ActiveRecord::Base.connection.select_value("SELECT to_regclass('pg_temp.lm_scratch')::text"),
                 "the caller's transaction was rolled back as the caller asked"
    end

    # A transaction opened on the raw connection behind ActiveRecord's back
    # (ActiveRecord's transaction_open? is false): the pool source sees it
    # on the raw connection and takes a connection of its own.
    def test_a_raw_transaction_active_record_does_not_know_of_gets_a_separate_connection
      name = unique_name("ar-raw")
      store = Stores::Postgres.new(ActiveRecord::Base)
      raw = ActiveRecord::Base.connection.raw_connection
      raw.exec("BEGIN")
      refute ActiveRecord::Base.connection.transaction_open?
      decision = store.authority(name).acquire(owner: 1, now: 1, ttl: 5)
      assert_predicate decision, :granted?
      assert_equal PG::PQTRANS_INTRANS, raw.transaction_status, "the caller's raw transaction is untouched"
      raw.exec("ROLLBACK")
      assert_equal decision.lease, Stores::Postgres.new(@admin).authority(name).checkpoint.lease,
                   "the decision committed on its own connection"
    end

    # ActiveRecord disconnected the thread's connection (its raw
    # PG::Connection is finished): a pool source reconnects it through the
    # adapter, as a single-connection source does.
    def test_a_disconnected_active_record_connection_is_reconnected_by_every_source
      { pool: ActiveRecord::Base, connection: ActiveRecord::Base.connection }.each do |kind, connection|
        store = Stores::Postgres.new(connection)
        raw = ActiveRecord::Base.connection.raw_connection
        ActiveRecord::Base.connection.disconnect!
        # ActiveRecord before 7.1 keeps the finished PG::Connection as its
        # raw connection until reconnect!; 7.1 and later connect again on use.
        assert_predicate raw, :finished?
        decision = store.authority(unique_name("ar-disconnected-#{kind}")).acquire(owner: 1, now: 1, ttl: 5)
        assert_predicate decision, :granted?, "through the #{kind}"
        assert_equal 1, ActiveRecord::Base.connection.select_value("SELECT 1"), "ActiveRecord's connection works again"
      end
    end

    def test_a_dead_active_record_connection_costs_one_store_error_then_reconnects
      name = unique_name("ar-dead")
      store = Stores::Postgres.new(ActiveRecord::Base)
      store.authority(name).acquire(owner: 1, now: 1, ttl: 1)
      backend = ActiveRecord::Base.connection.raw_connection.backend_pid
      @admin.exec_params("SELECT pg_terminate_backend($1)", [backend])
      sleep 0.01 until @admin.exec_params("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend]).ntuples.zero?
      assert_raises(StoreError) { store.authority(name).reacquire(owner: 1, now: 2, ttl: 1) }
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 2, ttl: 1).lease.token
      assert_equal 1, ActiveRecord::Base.connection.select_value("SELECT 1"), "ActiveRecord's connection works again"
      assert_equal "warning", ActiveRecord::Base.connection.select_value("SHOW client_min_messages"),
                   "reconnected through the adapter, which configured the new session as ActiveRecord does"
    end
  end
end
