# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/active_job"
require "concurrent/array"
require "logger"
require "stringio"
require "tmpdir"
require_relative "active_job_contract"

module LeaseMachines
  class ActiveJobSQLiteTest < Minitest::Test
    include ActiveJobContract

    def build_store
      @dir = Dir.mktmpdir("lm_active_job")
      Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
    end

    def teardown
      super
      FileUtils.rm_rf(@dir) if @dir
    end
  end

  class ActiveJobPostgresTest < Minitest::Test
    include ActiveJobContract

    def build_store
      Stores::Postgres.new(StoreTestHelper::PostgresServer.url)
    end
  end
end
