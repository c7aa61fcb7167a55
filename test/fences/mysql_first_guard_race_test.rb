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
