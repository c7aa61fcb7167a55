# frozen_string_literal: true

require "lease_machines/stores/schema"

module LeaseMachines
  module Fences
    # The fence table's SQL, read from db/<engine>/002_*.sql as {Stores::Schema} reads the stores'.
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
