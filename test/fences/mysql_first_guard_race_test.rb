# frozen_string_literal: true

require_relative "first_guard_race"
require_relative "mysql_fence_helper"
require "active_record"

module LeaseMachines
  # The first-guard race (FirstGuardRaceCases) on MySQL/MariaDB, with a
  # fence that opens its own connection from a URL.
  class MySQLUrlFirstGuardRaceTest < Minitest::Test
    include FirstGuardRaceCases
    include FenceTestHelper::MySQLData

    def race_fences = Fences::MySQL.new(@url)

    def race_connection(conn) = conn

    def race_mark_connection = @admin
  end

  # The race on Mysql2::Clients the children own, also inside their own
  # transactions (the guard joins them under a savepoint).
  class MySQLClientFirstGuardRaceTest < Minitest::Test
    include FirstGuardRaceInTransactionCases
    include FenceTestHelper::MySQLData

    def race_fences = Fences::MySQL.new(race_client)

    def race_client = MySQLServer.connect

    def race_commit(client) = client.query("COMMIT")

    def race_connection(conn) = conn

    def race_mark_connection = @admin
  end

  # Connected only in the forked children of the race below, so no child
  # shares a pool (or a socket) with the parent.
  class RaceMySQLRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  # The same race through ActiveRecord's mysql2 adapter: the guard is the
  # adapter's transaction, the mark the same statements.
  class MySQLActiveRecordFirstGuardRaceTest < Minitest::Test
    include FirstGuardRaceCases
    include FenceTestHelper::MySQLData

    def race_fences
      RaceMySQLRecord.establish_connection(@url)
      Fences::MySQL.new(RaceMySQLRecord)
    end

    def race_connection(conn) = conn.raw_connection

    def race_mark_connection = @admin
  end
end
