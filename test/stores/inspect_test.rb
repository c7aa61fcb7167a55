# frozen_string_literal: true

require_relative "store_helper"
require "lease_machines/stores/memory"
require "lease_machines/fences/sqlite"
require "lease_machines/fences/postgres"

module LeaseMachines
  # Stores and fences inspect as one short line: the class, where the
  # connections come from (a URL without its password), what changes their
  # answers; never the internals (2 to 4 KB of them before) nor a secret.
  # MySQL's: mysql_inspect_test.rb.
  class InspectTest < Minitest::Test
    include StoreTestHelper

    PG_URL = "postgres://app:s3cret@db.internal:5432/app?sslmode=require&password=s3cret"

    def test_stores_inspect_as_one_short_line_without_the_password
      Dir.mktmpdir do |dir|
        path = File.join(dir, "leases.sqlite3")
        shown = {
          Stores::SQLite.new(path) => "#<LeaseMachines::Stores::SQLite #{path}>",
          Stores::Postgres.new(PG_URL) =>
            "#<LeaseMachines::Stores::Postgres postgres://app:***@db.internal:5432/app?sslmode=require&password=***>",
          Stores::Postgres.new(PG_URL, signing_keys: ["k" * 32]) =>
            "#<LeaseMachines::Stores::Postgres postgres://app:***@db.internal:5432/app?sslmode=require&password=*** " \
            "signed>",
          Stores::SQLite.new(path, before_commit: ->(_commit) {}) =>
            "#<LeaseMachines::Stores::SQLite #{path} before_commit>"
        }
        shown.each do |store, expected|
          assert_equal expected, store.inspect
          assert_equal expected, store.to_s
          refute_includes store.inspect, "s3cret"
        end
      end
    end

    def test_a_caller_connection_is_named_by_its_class
      connection = PostgresServer.connect
      assert_equal "#<LeaseMachines::Stores::Postgres a PG::Connection the caller gave>",
                   Stores::Postgres.new(connection).inspect
      assert_equal "#<LeaseMachines::Fences::Postgres a PG::Connection the caller gave admits=live>",
                   Fences::Postgres.new(connection, store: true, strict: true).inspect
    ensure
      connection&.close
    end

    def test_fences_inspect_as_one_short_line_without_the_password
      Dir.mktmpdir do |dir|
        path = File.join(dir, "leases.sqlite3")
        assert_equal "#<LeaseMachines::Fences::SQLite #{path} admits=any>", Fences::SQLite.new(path).inspect
        assert_equal "#<LeaseMachines::Fences::Postgres postgres://app:***@db.internal:5432/app?sslmode=require" \
                     "&password=*** admits=any signed>", Fences::Postgres.new(PG_URL, signing_keys: ["k" * 32]).inspect
      end
    end
  end
end
