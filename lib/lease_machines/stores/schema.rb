# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The schema every engine's #setup! runs: the db/<engine>/*.sql the gem ships.
    module Schema
      ROOT = File.expand_path("../../..", __dir__)
      FILES = {
        postgres: "db/postgres/001_create_lease_machines_resources.sql",
        sqlite: "db/sqlite/001_create_lease_machines_resources.sql",
        mysql: "db/mysql/001_create_lease_machines_resources.sql"
      }.freeze

      def self.read(path) = File.read(File.join(ROOT, path), encoding: Encoding::UTF_8).freeze

      POSTGRES = read(FILES.fetch(:postgres))
      SQLITE = read(FILES.fetch(:sqlite))
      MYSQL = read(FILES.fetch(:mysql))
    end
  end
end
