# frozen_string_literal: true

require_relative "postgres_contract"
require_relative "../support/pgbouncer"

module LeaseMachines
  # The store contract (test/stores/store_contract.rb) through the pooler, with
  # `prepared_statements: false`, the setting a transaction-mode pooler needs.
  # The row helpers are PostgreSQL's (PostgresContract: the same table, read
  # directly); PostgresStoreTest's PostgreSQL-only tests (backend pids, server
  # restarts, URL options) and the ServerSessionCases are not run here:
  # through a pooler the backend pid is PgBouncer's own and the `options`
  # startup parameter is refused.
  class PgBouncerStoreTest < Minitest::Test
    include PostgresContract

    def setup
      @url = PgBouncer.url
      @admin = PgBouncer.direct
      @stores = []
    end

    def new_store(**options)
      Stores::Postgres.new(@url, **{ prepared_statements: false }.merge(options)).tap { |store| @stores << store }
    end

    # Through the pooler's database whose server connections commit with
    # synchronous_commit off (script/pgbouncer).
    def with_contention_database
      durable = @url
      @url = PgBouncer.url("#{PgBouncer::SCHEMA}_nosync")
      yield
    ensure
      @url = durable
    end

    # --- the pooler itself ----------------------------------------------------

    def test_the_pooler_is_in_transaction_mode
      pooled = PG.connect(@url)
      holder = PG.connect(@url)
      holder.exec("BEGIN")
      held = holder.exec("SELECT pg_backend_pid()").getvalue(0, 0)
      assert_equal "transaction", PgBouncer.setting("pool_mode")
      refute_equal held, pooled.exec("SELECT pg_backend_pid()").getvalue(0, 0),
                   "the held transaction keeps its server connection to itself"
      holder.exec("COMMIT")
      assert_equal PgBouncer::SCHEMA, pooled.exec("SHOW search_path").getvalue(0, 0)
    ensure
      holder&.close
      pooled&.close
    end

    # --- prepared statements on -----------------------------------------------

    # Statements prepared on one server connection, then run on another: the
    # store sees PostgreSQL's "prepared statement does not exist" on a
    # connection it had prepared before, prepares them again there and decides.
    def test_prepared_statements_on_another_server_connection_are_prepared_again
      name = unique_name("pooled-prepared")
      store = prepared_store(@url)
      assert_equal 1, store.authority(name).acquire(owner: 1, now: 10, ttl: 5).lease.token
      holder = PG.connect(@url)
      holder.exec("BEGIN") # takes the server connection the statements were prepared on (LIFO)
      holder.exec("SELECT 1")
      grant = store.authority(name).reacquire(owner: 1, now: 11, ttl: 5)
      assert_equal 2, grant.lease.token
      assert_equal 2, new_store.authority(name).checkpoint.last_issued
    ensure
      holder&.close
    end

    # When consecutive transactions of one client land on different server
    # connections (round robin here, load in production), statements prepared
    # on one are missing on the next. PgBouncer before 1.21 (Debian bookworm's
    # 1.18) passes protocol-level prepared statements through untouched: the
    # statements are lost right after they were prepared, and the store
    # refuses with the error that names the fix, writing nothing. A pooler
    # that tracks them (max_prepared_statements > 0: 1.21 and later, on by
    # default from 1.24; trixie ships 1.24, sid 1.26) prepares them on each
    # server connection itself, and the decision is made.
    def test_prepared_statements_on_consecutive_server_connections
      name = unique_name("round-robin")
      pair = PgBouncer.url("#{PgBouncer::SCHEMA}_pair")
      two_server_connections(pair)
      console = PgBouncer.console
      console.exec("SET server_round_robin = 1")
      store = prepared_store(pair)
      if PgBouncer.setting("max_prepared_statements").to_i.positive?
        assert_equal 1, store.authority(name).acquire(owner: 1, now: 10, ttl: 5).lease.token
        assert_equal 2, store.authority(name).reacquire(owner: 1, now: 11, ttl: 5).lease.token
        return
      end

      assert_lost_prepared_statements(store, name)
      fixed = Stores::Postgres.new(pair, prepared_statements: false).tap { |s| @stores << s }
      assert_predicate fixed.authority(name).reacquire(owner: 1, now: 20, ttl: 5), :granted?
    ensure
      console&.exec("SET server_round_robin = 0")
      console&.close
    end

    private

    # The store's message (prepared_statements.rb) after PostgreSQL's own.
    # The two ways a pooler that moves consecutive statements between server
    # sessions shows itself: a statement prepared a moment ago is missing, or
    # one found missing is already there when prepared.
    LOST = /\A#{Regexp.escape('PostgreSQL: ERROR:  prepared statement "lease_machines_')}[0-9a-f]+
            (?:#{Regexp.escape('" does not exist: the connection lost this store' \
                               "'s prepared statements again right after preparing them")}
            |#{Regexp.escape('" already exists: this store' \
                             "'s prepared statements were found missing and then present on the next statement")})
            #{Regexp.escape(' (a pooler in transaction mode?); use prepared_statements: false')}\z/x

    # Which call meets a lost statement depends on how many statements went
    # before it (round robin), so decisions are made until one does: it
    # raises the error that names the fix and writes nothing.
    def assert_lost_prepared_statements(store, name)
      error = nil
      8.times do |step|
        before = row(name)
        begin
          store.authority(name).reacquire(owner: 1, now: 10 + step, ttl: 5)
        rescue StoreError => e
          error = e
          assert_equal before, row(name), "nothing was written"
          break
        end
      end
      refute_nil error, "no decision met a lost prepared statement"
      assert_match LOST, error.message
      assert_kind_of PG::InvalidSqlStatementName, error.cause unless error.cause.is_a?(PG::DuplicatePstatement)
    end

    def row(name)
      @admin.exec_params("SELECT last_issued::text, lease_token::text, observed_ns::text FROM lease_machines_resources " \
                         "WHERE name = $1", [name]).values
    end

    def prepared_store(url)
      Stores::Postgres.new(url, prepared_statements: true).tap { |store| @stores << store }
    end

    # Makes the pair's pool hold two server connections, both idle.
    def two_server_connections(url)
      clients = Array.new(2) { PG.connect(url).tap { |c| c.exec("BEGIN; SELECT 1") } } # both held at once
      clients.each { |c| c.exec("COMMIT") }
    ensure
      clients&.each(&:close)
    end
  end
end
