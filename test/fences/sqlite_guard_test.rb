# frozen_string_literal: true

require_relative "connection_fault_cases"

module LeaseMachines
  # Fences::SQLite given a path: the fence opens (and owns) the database.
  class SQLitePathGuardTest < Minitest::Test
    include GuardContract
    include WriteLockCases
    include FenceTestHelper::SQLiteData

    def new_fences
      Fences::SQLite.new(@path).tap { |fences| @closing << fences }
    end

    def fences_waiting(seconds)
      Fences::SQLite.new(@path, busy_timeout: seconds).tap { |fences| @closing << fences }
    end

    def write(db, name, body)
      assert_kind_of SQLite3::Database, db
      driver_write(db, name, body)
    end

    def test_the_database_is_opened_in_wal_mode_with_full_sync
      fences.guard(unique_name, 1) do |db|
        assert_equal "wal", db.get_first_value("PRAGMA journal_mode")
        assert_equal 2, db.get_first_value("PRAGMA synchronous")
        assert_predicate db, :transaction_active?, "the block runs inside the guard's transaction"
      end
    end

    def test_a_missing_table_raises_store_error_naming_the_fix
      path = File.join(@dir, "empty.sqlite3")
      empty = Fences::SQLite.new(path)
      error = assert_raises(StoreError) { empty.guard("r", 1) { flunk "ran" } }
      assert_equal "SQLite (#{path}): no such table: lease_machines_fences (nothing was written); create the table " \
                   "with fences.setup! (or run LeaseMachines::Fences::SQLite::SCHEMA_SQL)", error.message
      assert_kind_of SQLite3::Exception, error.cause
      refute_instance_of OutcomeUnknownError, error
      empty.close
    end

    def test_a_guard_waits_for_another_writer_and_fails_cleanly_past_the_busy_timeout
      fences = Fences::SQLite.new(@path, busy_timeout: 0.2)
      @closing << fences
      resource = unique_name
      with_sqlite do |other|
        other.execute("BEGIN IMMEDIATE")
        started = monotonic
        error = assert_raises(StoreError) { fences.guard(resource, 1) { flunk "ran" } }
        assert_operator monotonic - started, :>=, 0.15
        assert_match(/database is locked \(nothing was written\)/, error.message)
        other.execute("ROLLBACK")
      end
      fences.guard(resource, 1) { |db| write(db, resource, "after the lock was let go") }
      assert_equal "after the lock was let go", committed_body(resource)
    end

    def test_close_closes_the_database_it_opened_and_a_later_call_opens_it_again
      resource = unique_name
      fences.guard(resource, 1) { |db| write(db, resource, "one") }
      assert_nil fences.close
      assert_equal 1, fences.highest(resource)
    end

    def test_busy_timeout_must_be_a_positive_number
      ill_typed!
      [0, -1, Float::NAN, Float::INFINITY, "5", nil].each do |bad|
        error = assert_raises(ArgumentError) { Fences::SQLite.new(@path, busy_timeout: bad) }
        assert_equal "busy_timeout must be a positive number of seconds, got #{bad.inspect}", error.message
      end
    end
  end

  # Fences::SQLite given an SQLite3::Database the caller owns.
  class SQLiteDatabaseGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include WriteLockCases
    include FenceTestHelper::SQLiteData

    def new_fences
      @database = sqlite_database
      Fences::SQLite.new(@database)
    end

    def fences_waiting(seconds)
      database = sqlite_database
      database.busy_timeout = (seconds * 1000).ceil
      Fences::SQLite.new(database)
    end

    def write(db, name, body)
      assert_same @database, db, "the block gets the caller's own database"
      driver_write(db, name, body)
    end

    def outer_transaction(commit:)
      fences
      driver_begin(@database)
      begin
        yield @database
      rescue Exception # rubocop:disable Lint/RescueException
        @database.execute("ROLLBACK") if @database.transaction_active?
        raise
      end
      @database.execute(commit ? "COMMIT" : "ROLLBACK")
    end

    # A deferred BEGIN that has read cannot become a writing transaction once
    # another connection wrote: SQLite refuses, and the guard with it.
    def test_inside_a_deferred_transaction_that_read_a_stale_snapshot_the_guard_refuses_to_write
      resource = unique_name
      fences.guard(resource, 1) { |db| write(db, resource, "by 1") }
      @database.execute("BEGIN")
      @database.execute("SELECT count(*) FROM fence_reports")
      with_sqlite { |other| Fences::SQLite.new(other).guard(resource, 2) { |db| driver_write(db, resource, "by 2") } }

      error = assert_raises(StoreError) { fences.guard(resource, 3) { flunk "ran" } }
      assert_match(/database is locked|busy/i, error.message)
      assert_predicate @database, :transaction_active?, "the caller's transaction is left to the caller"
      @database.execute("ROLLBACK")
      assert_equal ["by 2", 2], [committed_body(resource), fences.highest(resource)]
    end

    def test_the_fence_keeps_no_statement_open_so_the_caller_can_close_the_database
      resource = unique_name
      fences.guard(resource, 1) { |db| write(db, resource, "one") }
      assert_fenced(resource, 0, 1) { fences.guard(resource, 0) { flunk "ran" } }
      fences.highest(resource)
      @database.close
      assert_predicate @database, :closed?
    end

    def test_a_closed_database_raises_store_error
      fences
      @database.close
      error = assert_raises(StoreError) { fences.guard(unique_name, 1) { flunk "ran" } }
      assert_equal "SQLite: the database is closed", error.message
    end
  end
end
