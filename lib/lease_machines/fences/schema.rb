# frozen_string_literal: true

require "lease_machines/stores/schema"

module LeaseMachines
  module Fences
    # The fence table's SQL, read from the migration files the gem ships
    # (db/postgres/002_create_lease_machines_fences.sql and
    # db/sqlite/002_create_lease_machines_fences.sql) the way the stores read
    # theirs: what people read or apply themselves is what #setup! runs.
    module Schema
      FILES = {
        postgres: "db/postgres/002_create_lease_machines_fences.sql",
        sqlite: "db/sqlite/002_create_lease_machines_fences.sql",
        mysql: "db/mysql/002_create_lease_machines_fences.sql"
      }.freeze

      # @return [String] the schema SQL of `engine` (:postgres, :sqlite or :mysql)
      def self.sql(engine)
        Stores::Schema.read(FILES.fetch(engine))
      end
    end
  end
end
