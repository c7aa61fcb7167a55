# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # On PostgreSQL an equal token whose owner the mark already records (or a guard naming no owner) changes
  # nothing in the fence row: the mark only locks it, as the upsert would, and writes no new row version (no
  # dead tuple, no WAL record, the row's xmin stays that of the guard that raised it). Every other case still
  # goes through the upsert, and every admission mode decides as before.
  class PostgresEqualTokenTest < Minitest::Test
    include FenceTestHelper
    include FenceTestHelper::PostgresData

    def setup
      super
      @conn = pg_connection
      @conn.exec("SET search_path TO #{PostgresServer.schema}")
    end

    def test_an_equal_token_locks_the_fence_row_without_writing_it
      [{}, { prepared_statements: false }].each do |options|
        fences = Fences::Postgres.new(@conn, **options)
        resource = unique_name
        fences.guard(resource, 5, owner: 9) { |conn| driver_write(conn, resource, "first") }
        raised_by = row_version(resource)

        fences.guard(resource, 5, owner: 9) { |conn| driver_write(conn, resource, "again, same owner") }
        fences.guard(resource, 5) { |conn| driver_write(conn, resource, "again, no owner named") }

        assert_equal raised_by, row_version(resource), "#{options}: the equal token wrote no row version"
        assert_equal ["again, no owner named", "5", "9"], [committed_body(resource), *mark_and_owner(resource)]
      end
    end

    def test_inside_the_callers_transaction_an_equal_token_writes_no_row_version
      fences = Fences::Postgres.new(@conn)
      resource = unique_name
      fences.guard(resource, 5, owner: 9) { nil }
      raised_by = row_version(resource)
      @conn.exec("BEGIN")
      fences.guard(resource, 5, owner: 9) { |conn| driver_write(conn, resource, "joined") }
      @conn.exec("COMMIT")

      assert_equal [raised_by, "joined"], [row_version(resource), committed_body(resource)]
    end

    def test_an_equal_token_naming_an_owner_on_a_mark_without_one_still_records_it
      fences = Fences::Postgres.new(@conn)
      resource = unique_name
      fences.guard(resource, 5) { nil }
      raised_by = row_version(resource)
      fences.guard(resource, 5, owner: 9) { nil }

      refute_equal raised_by, row_version(resource)
      assert_equal %w[5 9], mark_and_owner(resource)
      assert_raises(ReissuedTokenError) { fences.guard(resource, 5, owner: 10) { flunk "ran" } }
      assert_equal %w[5 9], mark_and_owner(resource)
    end

    # The lock the equal token takes still orders guards of one resource: a guard with the mark's token waits
    # for a guard raising it, then finds itself below it.
    def test_an_equal_token_waits_for_a_guard_raising_the_mark_and_is_then_refused
      resource = unique_name
      fences = Fences::Postgres.new(@conn)
      fences.guard(resource, 5, owner: 9) { nil }
      raising = Fences::Postgres.new(pg_connection.tap { |c| c.exec("SET search_path TO #{PostgresServer.schema}") })
      marked = Queue.new
      release = Queue.new
      raiser = Thread.new do
        raising.guard(resource, 6, owner: 10) do |conn|
          marked << true
          release.pop
          driver_write(conn, resource, "by 6")
        end
      end
      marked.pop
      waiter = Thread.new { assert_fenced(resource, 5, 6) { fences.guard(resource, 5, owner: 9) { flunk "ran" } } }
      sleep 0.2
      assert waiter.alive?, "the equal token waits for the fence row"
      release << true
      [raiser, waiter].each(&:join)

      assert_equal ["by 6", "6", "10"], [committed_body(resource), *mark_and_owner(resource)]
    end

    # Strict: an equal token is admitted only while its lease is live, also when the mark already holds it.
    def test_a_strict_fence_refuses_an_equal_token_whose_lease_ended
      store = Stores::Postgres.new(@conn)
      store.setup!
      resource = unique_name
      lease = store.authority(resource).acquire(owner: 9, ttl: 60).lease
      strict = Fences::Postgres.new(@conn, store: true, strict: true)
      strict.guard(resource, lease) { nil }
      raised_by = row_version(resource)
      strict.guard(resource, lease) { nil }
      assert_equal raised_by, row_version(resource)

      store.authority(resource).release(owner: 9, token: lease.token)
      assert_raises(FencedError) { strict.guard(resource, lease) { flunk "ran" } }
    end

    private

    def row_version(resource)
      @admin.exec_params("SELECT xmin::text FROM lease_machines_fences WHERE resource = $1", [resource]).getvalue(0, 0)
    end

    def mark_and_owner(resource)
      @admin.exec_params("SELECT highest::text, lease_owner::text FROM lease_machines_fences WHERE resource = $1",
                         [resource]).values.first
    end
  end
end
