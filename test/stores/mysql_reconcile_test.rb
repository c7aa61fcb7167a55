# frozen_string_literal: true

require_relative "store_helper"
require_relative "reconcile_cases"
require_relative "../support/mysql_server"
require "lease_machines/stores/mysql"
require "lease_machines/fences/mysql"

module LeaseMachines
  # store.reconcile on MySQL/MariaDB (test/stores/reconcile_cases.rb).
  class MySQLReconcileTest < Minitest::Test
    include StoreTestHelper
    include ReconcileCases

    def reconcile_store
      Stores::MySQL.new(MySQLServer.url)
    end

    def reconcile_fences
      Fences::MySQL.new(MySQLServer.url).setup!
    end
  end
end
