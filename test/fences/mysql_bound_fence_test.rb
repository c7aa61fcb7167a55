# frozen_string_literal: true

require_relative "mysql_fence_helper"
require "active_record"
# BoundFenceCases, the cases every engine's bound fence runs.
require_relative "bound_fence_cases"

module LeaseMachines
  # The MySQL parts of the bound fence tests: the store
  # (LeaseMachines::Stores::MySQL) in the same database as the fence.
  module BoundMySQL
    include FenceTestHelper::MySQLData

    # In a database of the test's own (the fence table too), so that the
    # process's database keeps its store table.
    def drop_store_table
      database = MySQLServer.scratch_database
      uri = URI.parse(@url)
      uri.path = "/#{database}"
      @url = uri.to_s
      Fences::MySQL.new(@url).tap(&:setup!).close
      use_database(database)
    end

    def use_database(_database); end

    def store
      @store ||= Stores::MySQL.new(@url).tap(&:setup!)
    end

    def write(conn, name, body)
      conn = conn.raw_connection if conn.respond_to?(:raw_connection)
      driver_write(conn, name, body)
    end

    def write_store_row(name, last_issued)
      store # the table
      @admin.query("INSERT INTO lease_machines_resources (name, last_issued) VALUES (#{quoted(name)}, #{last_issued})")
    end
  end

  class BoundFenceMySQLUrlTest < Minitest::Test
    include BoundFenceCases
    include BoundMySQL

    def new_fences(**options) = Fences::MySQL.new(@url, **options).tap { |fences| @closing << fences }
  end

  class BoundFenceMySQLClientTest < Minitest::Test
    include BoundFenceCases
    include BoundMySQL
    include BoundJoiningCases

    def new_fences(**options)
      @conn = mysql_client
      @conn.select_db(@database) if @database
      Fences::MySQL.new(@conn, **options)
    end

    def use_database(database)
      @database = database
    end
  end

  class BoundFenceMySQLRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class BoundFenceMySQLActiveRecordTest < Minitest::Test
    include BoundFenceCases
    include BoundMySQL

    def setup
      super
      BoundFenceMySQLRecord.establish_connection(@url) unless BoundFenceMySQLRecord.connected?
    end

    def new_fences(**options) = Fences::MySQL.new(BoundFenceMySQLRecord, **options)

    def use_database(database)
      BoundFenceMySQLRecord.connection.execute("USE #{database}")
      @used = true
    end

    def teardown
      BoundFenceMySQLRecord.connection.execute("USE #{MySQLServer.database}") if @used
      super
    end
  end
end
