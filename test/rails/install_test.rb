# frozen_string_literal: true

require "minitest/autorun"
require "json"
require_relative "install_contract"

module LeaseMachines
  class RailsInstallSQLiteTest < Minitest::Test
    include InstallContract

    def database = "sqlite3"
    def column_type = "WITHOUT ROWID"
    def token_column = "text"
    def token_options = ""
    def store_class = "LeaseMachines::Stores::SQLite"
  end

  class RailsInstallPostgresTest < Minitest::Test
    include InstallContract

    def database = "postgresql"
    def column_type = "numeric(20,0)"
    def token_column = "decimal"
    def token_options = ", precision: 20, scale: 0"
    def store_class = "LeaseMachines::Stores::Postgres"
  end
end
