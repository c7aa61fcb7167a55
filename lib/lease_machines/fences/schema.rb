# frozen_string_literal: true

module LeaseMachines
  module Fences
    # The fence table's SQL, read from the migration files the gem ships
    # (db/postgres/002_create_lease_machines_fences.sql and
    # db/sqlite/002_create_lease_machines_fences.sql): what people read or
    # apply themselves is what #setup! runs.
    module Schema
      ROOT = File.expand_path("../../..", __dir__)
      FILES = {
        postgres: "db/postgres/002_create_lease_machines_fences.sql",
        sqlite: "db/sqlite/002_create_lease_machines_fences.sql"
      }.freeze

      # @return [String] the schema SQL of `engine` (:postgres or :sqlite)
      def self.sql(engine)
        File.read(File.join(ROOT, FILES.fetch(engine)), encoding: Encoding::UTF_8).freeze
      end
    end
  end
end
