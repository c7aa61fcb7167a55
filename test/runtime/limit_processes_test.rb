# frozen_string_literal: true

require_relative "limit_processes_contract"

module LeaseMachines
  class SQLiteLimitProcessesTest < Minitest::Test
    include LimitProcessesContract

    def setup
      @dir = Dir.mktmpdir("lease_machines_limit")
      @path = File.join(@dir, "leases.sqlite3")
      Stores::SQLite.new(@path).setup!.close
    end

    def teardown
      FileUtils.rm_rf(@dir)
    end

    def new_store
      Stores::SQLite.new(@path)
    end
  end

  class PostgresLimitProcessesTest < Minitest::Test
    include LimitProcessesContract

    # The schema is chosen before any fork, so every child works in the parent's.
    def setup
      PostgresServer.url
    end

    def new_store
      Stores::Postgres.new(PostgresServer.url)
    end
  end
end
