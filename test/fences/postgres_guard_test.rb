# frozen_string_literal: true

require_relative "connection_fault_cases"
require_relative "server_guard_cases"

module LeaseMachines
  # Fences::Postgres given a URL: the fence opens (and owns) its connection.
  class PostgresUrlGuardTest < Minitest::Test
    include GuardContract
    include ServerGuardCases
    include ForkedChildCases
    include LostConnectionCases
    include FenceTestHelper::PostgresData

    def new_fences
      Fences::Postgres.new(@url).tap { |fences| @closing << fences }
    end

    def unreachable_url = "postgres://postgres@127.0.0.1:1/none?connect_timeout=2"

    def server_name = "PostgreSQL"

    def write(conn, name, body)
      assert_kind_of PG::Connection, conn
      driver_write(conn, name, body)
    end

    def test_a_missing_table_raises_store_error_naming_the_fix
      schema = "lm_fence_empty_#{Process.pid}"
      @admin.exec("SET client_min_messages = warning")
      @admin.exec("CREATE SCHEMA IF NOT EXISTS #{schema}")
      url = "#{PostgresServer.base_url}?options=-c%20search_path%3D#{schema}"
      empty = Fences::Postgres.new(url)
      error = assert_raises(StoreError) { empty.guard("r", 1) { flunk "ran" } }
      assert_match(/\APostgreSQL: ERROR:  relation "lease_machines_fences" does not exist /, error.message)
      assert_match(/\(nothing was written\); create the table with fences.setup!/, error.message)
      assert_kind_of PG::UndefinedTable, error.cause
      assert_raises(StoreError) { empty.highest("r") }
      empty.close
    ensure
      @admin.exec("DROP SCHEMA IF EXISTS #{schema} CASCADE")
    end

    def test_the_block_runs_in_the_session_default_isolation_inside_one_transaction
      fences.guard(unique_name, 1) do |conn|
        assert_equal PG::PQTRANS_INTRANS, conn.transaction_status
        assert_equal "read committed", conn.exec("SHOW transaction_isolation").getvalue(0, 0)
      end
    end
  end

  # Fences::Postgres given a PG::Connection the caller owns.
  class PostgresConnectionGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include LostConnectionCases
    include FenceTestHelper::PostgresData

    def new_fences
      @conn = pg_connection
      @conn.exec("SET search_path TO #{PostgresServer.schema}")
      Fences::Postgres.new(@conn)
    end

    def write(conn, name, body)
      assert_same @conn, conn, "the block gets the caller's own connection"
      driver_write(conn, name, body)
    end

    def outer_transaction(commit:)
      fences
      @conn.exec("BEGIN")
      begin
        yield @conn
      rescue Exception # rubocop:disable Lint/RescueException
        @conn.exec("ROLLBACK")
        raise
      end
      @conn.exec(commit ? "COMMIT" : "ROLLBACK")
    end

    def test_inside_a_failed_transaction_the_guard_refuses_and_the_transaction_stays_as_it_was
      fences
      @conn.exec("BEGIN")
      assert_raises(PG::Error) { @conn.exec("SELECT 1/0") }
      error = assert_raises(StoreError) { fences.guard(unique_name, 1) { flunk "ran" } }
      assert_equal "PostgreSQL: the connection's transaction has already failed (a statement in it raised): roll it " \
                   "back before guarding a write", error.message
      assert_equal PG::PQTRANS_INERROR, @conn.transaction_status
      @conn.exec("ROLLBACK")
    end

    def test_under_repeatable_read_a_guard_that_lost_the_race_fails_with_a_serialization_error
      resource = unique_name
      fences.guard(resource, 1) { |conn| write(conn, resource, "by 1") }
      @conn.exec("BEGIN ISOLATION LEVEL REPEATABLE READ")
      @conn.exec("SELECT 1 FROM lease_machines_fences LIMIT 1") # the snapshot is taken here
      Fences::Postgres.new(@url).tap { |other| other.guard(resource, 2) { |c| driver_write(c, resource, "by 2") } }.close

      error = assert_raises(StoreError) { fences.guard(resource, 3) { flunk "ran" } }
      assert_kind_of PG::TRSerializationFailure, error.cause
      assert_match(/could not serialize access due to concurrent update \(nothing was written\)/, error.message)
      @conn.exec("ROLLBACK")
      assert_equal ["by 2", 2], [committed_body(resource), fences.highest(resource)]
    end

    def test_a_block_that_swallows_a_failed_statement_commits_nothing
      resource = unique_name
      error = assert_raises(StoreError) do
        fences.guard(resource, 1) do |conn|
          write(conn, resource, "written before the failure")
          begin
            conn.exec("SELECT 1/0")
          rescue PG::Error
            nil # swallowed: PostgreSQL has aborted the transaction anyway
          end
        end
      end
      assert_match(/answered ROLLBACK to COMMIT .*nothing was committed/, error.message)
      assert_nil committed_body(resource)
      assert_nil committed_mark_text(resource)
      assert_equal PG::PQTRANS_IDLE, @conn.transaction_status
    end

    def test_inside_a_callers_transaction_a_swallowed_failure_rolls_back_to_the_savepoint
      resource = unique_name
      outer_transaction(commit: true) do |conn|
        write(conn, "#{resource}/before", "before")
        error = assert_raises(StoreError) do
          fences.guard(resource, 1) do |c|
            write(c, resource, "rolled back")
            begin
              c.exec("SELECT 1/0")
            rescue PG::Error
              nil
            end
          end
        end
        assert_match(/the guarded writes were rolled back to the savepoint/, error.message)
        assert_equal PG::PQTRANS_INTRANS, conn.transaction_status, "the caller's transaction is usable again"
      end
      assert_equal "before", committed_body("#{resource}/before")
      assert_nil committed_body(resource)
      assert_nil committed_mark_text(resource)
    end

    def test_a_prepared_mark_that_vanished_is_prepared_again
      resource = unique_name
      fences.guard(resource, 1) { |conn| write(conn, resource, "one") }
      @conn.exec("DISCARD ALL") # as a pooler does between clients
      @conn.exec("SET search_path TO #{PostgresServer.schema}")
      fences.guard(resource, 2) { |conn| write(conn, resource, "two, after DISCARD ALL") }
      assert_equal "two, after DISCARD ALL", committed_body(resource)

      @conn.exec("DEALLOCATE ALL")
      outer_transaction(commit: true) do |conn|
        write(conn, "#{resource}/before", "before")
        fences.guard(resource, 3) { |c| write(c, resource, "three, joined, after DEALLOCATE ALL") }
      end
      assert_equal ["before", "three, joined, after DEALLOCATE ALL"],
                   [committed_body("#{resource}/before"), committed_body(resource)]
      assert_equal 3, fences.highest(resource)
    end

    def test_a_connection_lost_before_commit_raises_store_error_and_is_reconnected
      fences
      resource = unique_name
      terminate(@conn.backend_pid)
      error = assert_raises(StoreError) { fences.guard(resource, 1) { |conn| write(conn, resource, "lost") } }
      assert_match(/\APostgreSQL: .*\(nothing was written\)/m, error.message)
      assert_kind_of PG::Error, error.cause
      assert_equal PG::CONNECTION_OK, @conn.status, "the guard reconnects the connection it broke on"

      @conn.exec("SET search_path TO #{PostgresServer.schema}") # a new session: the test's own setting again
      fences.guard(resource, 1) { |conn| write(conn, resource, "after the reconnect") }
      assert_equal "after the reconnect", committed_body(resource)
    end
  end

  # Fences::Postgres without prepared statements: BEGIN (or SAVEPOINT) and
  # the mark go as one simple query.
  class PostgresUnpreparedGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include FenceTestHelper::PostgresData

    def new_fences
      @conn = pg_connection
      @conn.exec("SET search_path TO #{PostgresServer.schema}")
      Fences::Postgres.new(@conn, prepared_statements: false)
    end

    def write(conn, name, body) = driver_write(conn, name, body)

    def outer_transaction(commit:)
      fences
      @conn.exec("BEGIN")
      begin
        yield @conn
      rescue Exception # rubocop:disable Lint/RescueException
        @conn.exec("ROLLBACK")
        raise
      end
      @conn.exec(commit ? "COMMIT" : "ROLLBACK")
    end

    def test_nothing_is_prepared_on_the_connection
      fences.guard(unique_name, 1) { nil }
      assert_equal 0, @conn.exec("SELECT count(*) FROM pg_prepared_statements").getvalue(0, 0).to_i
    end

    def test_prepared_statements_must_be_true_or_false
      ill_typed!
      error = assert_raises(TypeError) { Fences::Postgres.new(@url, prepared_statements: "no") }
      assert_equal 'prepared_statements must be true or false, got "no"', error.message
    end
  end

  # Fences::Postgres given a pool responding to `with` (connection_pool's API).
  class PostgresPoolGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include LostConnectionCases
    include FenceTestHelper::PostgresData

    def new_fences
      @pool = FenceTestHelper::TinyPool.new(2, @url)
      @closing << Struct.new(:pool) { def close = pool.shutdown }.new(@pool)
      Fences::Postgres.new(@pool)
    end

    def write(conn, name, body)
      assert_kind_of PG::Connection, conn
      driver_write(conn, name, body)
    end

    # The pool hands the same connection to nested `with` calls of a thread,
    # so a guard inside the caller's `with` block joins its transaction.
    def outer_transaction(commit:)
      fences
      @pool.with do |conn|
        conn.exec("BEGIN")
        begin
          yield conn
        rescue Exception # rubocop:disable Lint/RescueException
          conn.exec("ROLLBACK")
          raise
        end
        conn.exec(commit ? "COMMIT" : "ROLLBACK")
      end
    end
  end
end
