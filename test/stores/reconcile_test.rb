# frozen_string_literal: true

require_relative "store_helper"
require_relative "reconcile_cases"
require "lease_machines/fences/postgres"

module LeaseMachines
  # store.reconcile on SQLite, PostgreSQL and the in-memory store
  # (test/stores/reconcile_cases.rb; MySQL: mysql_reconcile_test.rb).
  class SQLiteReconcileTest < Minitest::Test
    include StoreTestHelper
    include ReconcileCases

    def reconcile_store
      @dir = Dir.mktmpdir("lease_machines_reconcile")
      Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
    end

    def reconcile_fences
      Fences::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
    end

    def teardown
      super
      FileUtils.rm_rf(@dir)
    end
  end

  class PostgresReconcileTest < Minitest::Test
    include StoreTestHelper
    include ReconcileCases

    def reconcile_store
      Stores::Postgres.new(PostgresServer.url)
    end

    def reconcile_fences
      Fences::Postgres.new(PostgresServer.url).setup!
    end

    # A cleared lease is a release: a waiter on the resource wakes (NOTIFY).
    def test_a_cleared_lease_wakes_a_waiter
      name = unique_name("reconcile")
      @store.authority(name).acquire(owner: 1, ttl: 60)
      @fences.guard(name, 5) { nil }
      waiter = Thread.new { @store.await_handover(name, 10) }
      sleep 0.2
      other = Stores::Postgres.new(PostgresServer.url)
      other.reconcile(@fences)
      assert waiter.value
    ensure
      other&.close
    end
  end

  class MemoryReconcileTest < Minitest::Test
    include StoreTestHelper
    include ReconcileCases

    def reconcile_store
      @dir = Dir.mktmpdir("lease_machines_reconcile")
      Stores::Memory.new
    end

    def reconcile_fences
      Fences::SQLite.new(File.join(@dir, "app.sqlite3")).setup!
    end

    def teardown
      super
      FileUtils.rm_rf(@dir)
    end
  end
end
