# frozen_string_literal: true

require_relative "../stores/store_helper"
require "lease_machines/fences/sqlite"
require "timeout"

module LeaseMachines
  # Shared by the fence suite (test/fences): real databases, nothing mocked.
  # Builds on the store suite's helpers (a PostgreSQL schema of this test
  # process's own, forked children, waiting) and adds the protected data: a
  # `fence_reports` table beside the fence table, read back on a separate
  # connection, so a test sees what was committed, not what its own session
  # sees.
  module FenceTestHelper
    include StoreTestHelper

    PostgresServer = StoreTestHelper::PostgresServer
    REPORTS = "fence_reports"
    REPORTS_SQL = "CREATE TABLE IF NOT EXISTS #{REPORTS} (name text PRIMARY KEY, body text NOT NULL, writer text)".freeze
    SQLITE_UPSERT = "INSERT INTO #{REPORTS} (name, body) VALUES (?, ?) " \
                    "ON CONFLICT (name) DO UPDATE SET body = excluded.body".freeze
    POSTGRES_UPSERT = "INSERT INTO #{REPORTS} (name, body) VALUES ($1, $2) " \
                      "ON CONFLICT (name) DO UPDATE SET body = excluded.body".freeze

    # A tiny connection pool (what the connection_pool gem offers: `with`,
    # reentrant per thread) over real PG connections.
    class TinyPool
      def initialize(size, url)
        @idle = Array.new(size) { PG.connect(url) }
        @all = @idle.dup
        @mutex = Mutex.new
        @held = {}
      end

      def with
        thread = Thread.current
        return yield @held[thread] if @held[thread]

        conn = @mutex.synchronize { @idle.pop or raise "TinyPool: exhausted" }
        @held[thread] = conn
        begin
          yield conn
        ensure
          @held.delete(thread)
          @mutex.synchronize { @idle.push(conn) }
        end
      end

      def shutdown
        @all.each { |conn| conn.finish unless conn.finished? }
      end
    end

    # SQLite: a database file of the test's own, in a temporary folder.
    module SQLiteData
      def engine = :sqlite

      def fence_class = Fences::SQLite

      def setup
        super
        @dir = Dir.mktmpdir("lease_machines_fences")
        @path = File.join(@dir, "data.sqlite3")
        with_sqlite { |db| db.execute(REPORTS_SQL) }
        Fences::SQLite.new(@path).setup!.close
        @closing = []
      end

      def teardown
        @closing.each { |thing| thing.close unless thing.respond_to?(:closed?) && thing.closed? }
        FileUtils.remove_entry(@dir)
        super
      end

      # A new connection to the test's file (closed by the block's end).
      def with_sqlite
        db = SQLite3::Database.new(@path)
        db.busy_timeout = 10_000
        yield db
      ensure
        db&.close
      end

      # The test's file, opened for the test (closed at teardown).
      def sqlite_database
        db = SQLite3::Database.new(@path)
        db.busy_timeout = 10_000
        @closing << db
        db
      end

      def committed_body(name)
        with_sqlite { |db| db.get_first_value("SELECT body FROM #{REPORTS} WHERE name = ?", [name]) }
      end

      def committed_mark_text(resource)
        with_sqlite { |db| db.get_first_value("SELECT highest FROM lease_machines_fences WHERE resource = ?", [resource]) }
      end

      def fence_rows(resource)
        with_sqlite { |db| db.get_first_value("SELECT count(*) FROM lease_machines_fences WHERE resource = ?", [resource]) }
      end

      def driver_write(db, name, body)
        db.execute(SQLITE_UPSERT, [name, body])
      end

      def driver_begin(db) = db.execute("BEGIN IMMEDIATE")
    end

    # PostgreSQL: this test process's schema on the test server; every test
    # uses names of its own.
    module PostgresData
      def engine = :postgres

      def fence_class = Fences::Postgres

      def setup
        super
        @url = PostgresServer.url
        FenceTestHelper.prepare_postgres(@url)
        @admin = PostgresServer.connect
        @closing = []
      end

      def teardown
        @closing.each { |thing| thing.respond_to?(:finish) ? thing.finish : thing.close }
        @admin&.finish
        super
      end

      # A PG::Connection for the test (closed at teardown).
      def pg_connection
        conn = PostgresServer.connect
        @closing << conn
        conn
      end

      def committed_body(name)
        @admin.exec_params("SELECT body FROM #{REPORTS} WHERE name = $1", [name]).values.dig(0, 0)
      end

      def committed_mark_text(resource)
        @admin.exec_params("SELECT highest::text FROM lease_machines_fences WHERE resource = $1", [resource]).values.dig(0, 0)
      end

      def fence_rows(resource)
        Integer(@admin.exec_params("SELECT count(*) FROM lease_machines_fences WHERE resource = $1",
                                   [resource]).getvalue(0, 0))
      end

      def driver_write(conn, name, body)
        conn.exec_params(POSTGRES_UPSERT, [name, body])
      end

      def driver_begin(conn) = conn.exec("BEGIN")

      def server_session(conn) = conn.backend_pid

      def end_session(backend) = terminate(backend)

      # A transaction of its own holding the fence row of `resource`.
      def hold_fence_row(resource)
        holder = pg_connection
        holder.exec("SET search_path TO #{PostgresServer.schema}")
        holder.exec("BEGIN")
        holder.exec_params("SELECT 1 FROM lease_machines_fences WHERE resource = $1 FOR UPDATE", [resource])
        holder
      end

      # The interrupted guard's thread ended (raising `error`, or killed) while `holder` still held its lock;
      # the holder's transaction is rolled back either way, so a guard that waits on ends too.
      def assert_ended_while_held(thread, holder, error, context = nil)
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
        sleep 0.01 while thread.alive? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
        ended = !thread.alive?
        holder.exec("ROLLBACK")
        assert ended, "the interrupt reached the guard while the lock was held #{context}"
        error ? assert_raises(error) { thread.join } : assert_nil(thread.value)
      end
    end

    class << self
      # Creates the reports and fence tables in this process's schema, once.
      def prepare_postgres(url)
        return if @prepared_postgres

        conn = PG.connect(url)
        conn.exec("SET client_min_messages = warning")
        conn.exec(REPORTS_SQL)
        conn.close
        Fences::Postgres.new(url).tap(&:setup!).close
        @prepared_postgres = true
      end
    end

    # The token's text as each engine's column holds it.
    def stored_text(token)
      engine == :sqlite ? format("%020d", token) : token.to_s
    end

    # A test that makes ill-typed calls on purpose, to check the errors the
    # API raises for them, does not run under `rake rbs:test`: the runtime
    # type checker would refuse those calls first (see rakelib/rbs.rake).
    def ill_typed!
      skip "ill-typed on purpose: the signatures refuse these calls" if defined?(::RBS::Test::Tester)
    end

    # Asserts that `block` raises FencedError for `resource`, `token` and
    # `highest`, with the message naming all three, and returns it.
    def assert_fenced(resource, token, highest, &)
      error = assert_raises(FencedError, &)
      assert_equal [resource, token, highest], [error.resource, error.token, error.highest]
      assert_includes error.message, resource.inspect
      assert_includes error.message, "token #{token}"
      assert_includes error.message, "token #{highest}" if highest
      error
    end
  end
end
