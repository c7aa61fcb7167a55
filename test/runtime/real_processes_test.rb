# frozen_string_literal: true

require_relative "real_processes_contract"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"

module LeaseMachines
  class SQLiteRealProcessesTest < Minitest::Test
    include RealProcessesContract

    def setup
      @dir = Dir.mktmpdir("lease_machines_runtime")
      @path = File.join(@dir, "leases.sqlite3")
      Stores::SQLite.new(@path).setup!.close
      Fences::SQLite.new(@path).tap(&:setup!).close
      SQLite3::Database.new(@path) { |db| db.execute("CREATE TABLE reports (name TEXT PRIMARY KEY, body TEXT)") }
    end

    def teardown
      FileUtils.rm_rf(@dir)
    end

    def new_store
      Stores::SQLite.new(@path)
    end

    def new_fences
      Fences::SQLite.new(@path)
    end

    def write_row(db, name, body)
      db.execute("INSERT INTO reports (name, body) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET body = ?", [name, body, body])
    end
  end

  class PostgresRealProcessesTest < Minitest::Test
    include RealProcessesContract

    def setup
      url = PostgresServer.url
      Fences::Postgres.new(url).tap(&:setup!).close
      conn = PostgresServer.connect
      conn.exec("SET client_min_messages = warning")
      conn.exec("CREATE TABLE IF NOT EXISTS reports (name TEXT PRIMARY KEY, body TEXT)")
      conn.close
    end

    def new_store
      Stores::Postgres.new(PostgresServer.url)
    end

    def new_fences
      Fences::Postgres.new(PostgresServer.url)
    end

    # A real fault: the hook has the store's own backend terminated (from
    # another connection) during its first two renewals. Each fails as the
    # store reports it; the renewal thread retries, the store reconnects, the
    # hold goes on and releases.
    def test_renewals_over_a_broken_connection_are_retried
      name = unique_name("broken")
      admin = PostgresServer.connect
      broken = 0
      hook = lambda do |commit|
        next unless commit.decision&.renewed? && broken < 2

        broken += 1
        admin.exec_params("SELECT pg_terminate_backend($1)", [commit.connection.backend_pid])
      end
      renewals = []
      subscriber = LeaseMachines.subscribe { |event, payload| renewals << payload[:status] if event == :renew }
      store = Stores::Postgres.new(PostgresServer.url, before_commit: hook)
      state = store.authority(name).hold!(owner: 6, ttl: 2, renew_after: 0.2, warn_before: 0.5) do |held|
        sleep 0.1 until renewals.count(:renewed) >= 2 || renewals.size > 20
        held.check!
        held.state
      end
      assert_equal :confirmed, state
      assert_equal %i[failed failed], renewals.first(2), "the first two renewals met a dead connection"
      assert_includes renewals, :renewed
      assert_nil store.authority(name).checkpoint.lease, "released over the new connection"
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
      admin&.close
      store&.close
    end

    def write_row(conn, name, body)
      conn.exec_params("INSERT INTO reports (name, body) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET body = $2",
                       [name, body])
    end
  end
end
