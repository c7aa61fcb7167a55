# frozen_string_literal: true

require_relative "mysql_fence_helper"
# SignedFenceCases, the cases of signed tokens every engine runs.
require_relative "signed_fence_cases"

module LeaseMachines
  # The lease store in MySQL with signing keys, the data and its fence in
  # SQLite; and the store in SQLite, the data and its fence in MySQL.
  class SignedMySQLStoreFenceTest < Minitest::Test
    include SignedFenceCases
    include FenceTestHelper::SQLiteData

    def store(**options)
      Stores::MySQL.new(MySQLServer.url, **options).tap(&:setup!)
    end

    def new_fences(**options) = Fences::SQLite.new(@path, **options)

    def write(conn, name, body) = driver_write(conn, name, body)
  end

  class SignedMySQLFenceTest < Minitest::Test
    include SignedFenceCases
    include FenceTestHelper::MySQLData

    def setup
      super
      @store_dir = Dir.mktmpdir("lease_machines_signed_store")
    end

    def teardown
      super
      FileUtils.remove_entry(@store_dir)
    end

    def store(**options)
      Stores::SQLite.new(File.join(@store_dir, "leases.sqlite3"), **options).tap(&:setup!)
    end

    def new_fences(**options) = Fences::MySQL.new(@url, **options)

    def write(conn, name, body) = driver_write(conn, name, body)
  end
end
