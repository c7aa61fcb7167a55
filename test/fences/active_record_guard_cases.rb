# frozen_string_literal: true

require_relative "guard_contract"
require "active_record"

module LeaseMachines
  # Fences given ActiveRecord: the guard is a transaction (or a savepoint) of
  # ActiveRecord's, on the calling thread's connection. An including class
  # provides `record_class` (the abstract class) and `report_model`.
  module ActiveRecordGuardCases
    def new_fences
      fence_class.new(record_class)
    end

    def write(conn, name, body)
      assert_same record_class.connection, conn, "the block gets the thread's own ActiveRecord connection"
      conn.exec_update(engine == :sqlite ? FenceTestHelper::SQLITE_UPSERT : FenceTestHelper::POSTGRES_UPSERT,
                       "test write", [name, body])
    end

    def outer_transaction(commit:, &block)
      record_class.transaction do
        block.call(record_class.connection)
        raise ::ActiveRecord::Rollback unless commit
      end
    end

    def test_models_written_in_the_block_are_in_the_guarded_transaction
      resource = unique_name
      assert_raises(RuntimeError) do
        fences.guard(resource, 3) do
          report_model.create!(name: resource, body: "by a model, rolled back")
          raise "render failed"
        end
      end
      assert_nil committed_body(resource)

      fences.guard(resource, 3) { report_model.create!(name: resource, body: "by a model") }
      assert_equal "by a model", committed_body(resource)
      assert_equal 3, fences.highest(resource)
    end

    def test_a_fenced_error_escaping_the_callers_transaction_rolls_all_of_it_back
      resource = unique_name
      fences.guard(resource, 5) { |conn| write(conn, resource, "by 5") }

      assert_fenced(resource, 4, 5) do
        record_class.transaction do
          report_model.create!(name: "#{resource}/before", body: "written before the guard")
          fences.guard(resource, 4) { flunk "ran" }
        end
      end

      assert_nil committed_body("#{resource}/before"), "ActiveRecord rolls back the transaction the error escaped"
      assert_equal "by 5", committed_body(resource)
    end

    def test_raising_active_record_rollback_in_the_block_rolls_the_guard_back_and_returns_nil
      resource = unique_name
      fences.guard(resource, 2) { |conn| write(conn, resource, "by 2") }
      value = fences.guard(resource, 6) do |conn|
        write(conn, resource, "by 6, rolled back")
        raise ::ActiveRecord::Rollback
      end

      assert_nil value
      assert_equal "by 2", committed_body(resource)
      assert_equal 2, fences.highest(resource)
    end

    def test_a_pool_and_a_single_connection_work_the_same
      [record_class.connection_pool, record_class.connection].each do |connection|
        resource = unique_name
        other = fence_class.new(connection)
        other.guard(resource, 2) { |conn| write(conn, resource, "by 2") }
        assert_fenced(resource, 1, 2) { other.guard(resource, 1) { flunk "ran" } }
        assert_equal [2, "by 2"], [other.highest(resource), committed_body(resource)]
      end
    end

    def test_a_fence_of_the_other_engine_is_refused_with_a_clear_error
      other = engine == :sqlite ? Fences::Postgres : Fences::SQLite
      error = assert_raises(TypeError) { other.new(record_class).guard(unique_name, 1) { flunk "ran" } }
      adapter = record_class.connection.adapter_name
      assert_match(/\Athe ActiveRecord connection is #{adapter}, not (PostgreSQL|SQLite): use the fence class of its engine\z/,
                   error.message)
    end
  end

  # setup! inside the caller's transaction joins it where DDL is
  # transactional (SQLite, PostgreSQL); MySQL refuses it instead (its
  # MySQLActiveRecordGuardTest).
  module ActiveRecordSetupJoinsCases
    def test_setup_inside_a_transaction_joins_it
      record_class.transaction do
        fences.setup!
        assert record_class.connection.transaction_open?
      end
    end
  end
end
