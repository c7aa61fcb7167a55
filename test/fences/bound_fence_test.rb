# frozen_string_literal: true

require_relative "bound_fence_cases"
require "active_record"

module LeaseMachines
  # The parts of each engine's test classes.
  module BoundSQLite
    include FenceTestHelper::SQLiteData

    def drop_store_table
      with_sqlite { |db| db.execute("DROP TABLE IF EXISTS lease_machines_resources") }
    end

    def store
      @store ||= Stores::SQLite.new(@path).tap(&:setup!)
    end

    def write(conn, name, body)
      conn = conn.raw_connection if conn.respond_to?(:raw_connection)
      driver_write(conn, name, body)
    end

    def write_store_row(name, last_issued)
      store # the table
      with_sqlite do |db|
        db.execute("INSERT INTO lease_machines_resources (name, last_issued) VALUES (?, ?)", [name, last_issued.to_s])
      end
    end
  end

  module BoundPostgres
    include FenceTestHelper::PostgresData

    # In a schema of the test's own (the fence table too), so that the
    # process's schema keeps its store table.
    def drop_store_table
      schema = "lm_bound_#{SecureRandom.hex(4)}"
      @admin.exec("CREATE SCHEMA #{schema}")
      @dropped_schema = schema
      @url = "#{FenceTestHelper::PostgresServer.base_url}?options=-c%20search_path%3D#{schema}"
      Fences::Postgres.new(@url).tap(&:setup!).close
      use_schema(schema)
    end

    def use_schema(_schema); end

    def teardown
      super
    ensure
      if @dropped_schema
        conn = FenceTestHelper::PostgresServer.connect
        conn.exec("DROP SCHEMA #{@dropped_schema} CASCADE")
        conn.finish
      end
    end

    def store
      @store ||= Stores::Postgres.new(@url).tap(&:setup!)
    end

    def write(conn, name, body)
      conn = conn.raw_connection if conn.respond_to?(:raw_connection)
      driver_write(conn, name, body)
    end

    def write_store_row(name, last_issued)
      store # the table
      @admin.exec_params("INSERT INTO lease_machines_resources (name, last_issued) VALUES ($1, $2::numeric)",
                         [name, last_issued.to_s])
    end
  end

  class BoundFenceSQLitePathTest < Minitest::Test
    include BoundFenceCases
    include BoundSQLite

    def new_fences(**options) = Fences::SQLite.new(@path, **options)
  end

  class BoundFenceSQLiteDatabaseTest < Minitest::Test
    include BoundFenceCases
    include BoundSQLite

    include BoundJoiningCases

    def new_fences(**options)
      @conn = sqlite_database
      Fences::SQLite.new(@conn, **options)
    end
  end

  class BoundFencePostgresUrlTest < Minitest::Test
    include BoundFenceCases
    include BoundPostgres

    def new_fences(**options) = Fences::Postgres.new(@url, **options)
  end

  class BoundFencePostgresSimpleQueryTest < Minitest::Test
    include BoundFenceCases
    include BoundPostgres

    include BoundJoiningCases

    def new_fences(**options)
      @conn = pg_connection
      @conn.exec("SET search_path TO #{@search_path}") if @search_path
      Fences::Postgres.new(@conn, prepared_statements: false, **options)
    end

    def use_schema(schema)
      @search_path = schema
    end
  end

  class BoundFenceSQLiteRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class BoundFencePostgresRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class BoundFenceSQLiteActiveRecordTest < Minitest::Test
    include BoundFenceCases
    include BoundSQLite

    def setup
      super
      BoundFenceSQLiteRecord.establish_connection(adapter: "sqlite3", database: @path, timeout: 10_000)
    end

    def teardown
      BoundFenceSQLiteRecord.remove_connection
      super
    end

    def new_fences(**options) = Fences::SQLite.new(BoundFenceSQLiteRecord, **options)
  end

  class BoundFencePostgresActiveRecordTest < Minitest::Test
    include BoundFenceCases
    include BoundPostgres

    def setup
      super
      return if BoundFencePostgresRecord.connected?

      BoundFencePostgresRecord.establish_connection(adapter: "postgresql", url: PostgresServer.base_url,
                                                    schema_search_path: PostgresServer.schema)
    end

    def new_fences(**options) = Fences::Postgres.new(BoundFencePostgresRecord, **options)

    def use_schema(schema)
      BoundFencePostgresRecord.connection.schema_search_path = schema
    end

    def teardown
      BoundFencePostgresRecord.connection.schema_search_path = FenceTestHelper::PostgresServer.schema if @dropped_schema
      super
    end
  end
end

module LeaseMachines
  # A fence bound to its store on a PG::Connection with prepared statements
  # (the default), beside an unbound fence on the same connection: each
  # prepares its own mark.
  class BoundFencePostgresConnectionTest < Minitest::Test
    include BoundFenceCases
    include BoundPostgres
    include BoundJoiningCases

    def new_fences(**options)
      @conn ||= pg_connection
      @conn.exec("SET search_path TO #{@search_path}") if @search_path
      Fences::Postgres.new(@conn, **options)
    end

    def use_schema(schema)
      @search_path = schema
    end

    def test_bound_and_unbound_fences_share_a_connection
      name = unique_name
      token = acquire(name)
      unbound = new_fences
      unbound.guard(name, token) { |conn| write(conn, name, "unbound") }
      bound.guard(name, token) { |conn| write(conn, name, "bound") }
      strict.guard(name, token) { |conn| write(conn, name, "strict") }
      assert_refused(UnknownTokenError, bound, name, token + 1)
      unbound.guard(name, token + 1) { |conn| write(conn, name, "unbound lets it through") }
      assert_equal token + 1, bound.highest(name)
    end
  end
end
