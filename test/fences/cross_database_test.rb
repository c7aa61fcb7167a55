# frozen_string_literal: true

require_relative "cross_database_cases"

module LeaseMachines
  # The lease store in SQLite, the fenced data (and its fence) in PostgreSQL.
  class SQLiteStorePostgresDataTest < Minitest::Test
    include CrossDatabaseCases
    include FenceTestHelper::PostgresData

    def setup
      super
      @store_dir = Dir.mktmpdir("lease_machines_store")
      @store_path = File.join(@store_dir, "leases.sqlite3")
    end

    def teardown
      @store&.close
      FileUtils.remove_entry(@store_dir)
      @data_fences&.close
      super
    end

    def store
      @store ||= Stores::SQLite.new(@store_path).tap(&:setup!)
    end

    def data_fences
      @data_fences ||= Fences::Postgres.new(@url)
    end

    def write(conn, name, body) = driver_write(conn, name, body)

    def lose_the_store
      @store.close
      @store = nil
      FileUtils.remove_entry(@store_dir)
      FileUtils.mkdir_p(@store_dir)
    end
  end

  # The lease store in PostgreSQL, the fenced data (and its fence) in SQLite.
  class PostgresStoreSQLiteDataTest < Minitest::Test
    include CrossDatabaseCases
    include FenceTestHelper::SQLiteData

    def setup
      super
      @store_url = StoreTestHelper::PostgresServer.url
    end

    def teardown
      @store&.close
      @data_fences&.close
      super
    end

    def store
      @store ||= Stores::Postgres.new(@store_url).tap(&:setup!)
    end

    def data_fences
      @data_fences ||= Fences::SQLite.new(@path)
    end

    def write(conn, name, body) = driver_write(conn, name, body)

    # The store's database is no longer reachable at all.
    def lose_the_store
      @store.close
      @store = Stores::Postgres.new("postgres://postgres@127.0.0.1:1/gone?connect_timeout=1")
      assert_raises(StoreError) { @store.authority("any").checkpoint }
    end
  end
end
