# frozen_string_literal: true

require "lease_machines"
require_relative "fenced_error"

module LeaseMachines
  # Fences at the protected resource, kept in the resource's own database
  # (docs/FENCES.md): a mark per resource, raised in the same transaction as
  # the writes it guards.
  module Fences
    # The fence table (found through the connection's search_path on PostgreSQL).
    TABLE = "lease_machines_fences"
    # The lease store's table, which a fence bound to its store (`store:
    # true`) reads in the fence's own database (db/*/001_create_lease_machines_resources.sql).
    STORE_TABLE = "lease_machines_resources"
    STORE_TABLE_HINT = "a fence bound to its store (store: true) needs the store's table in its database: create " \
                       "it with the store's setup! (LeaseMachines::Stores::SQLite, Stores::Postgres or " \
                       "Stores::MySQL, on this database)"
    # The column that records the owner of the grant whose token set the mark
    # (a reissued token is told by it); a table made before it lacks it.
    OWNER_COLUMN = "lease_owner"

    # The hint for a table made before the owner column.
    def self.owner_column_hint(schema)
      "the table #{TABLE} predates its #{OWNER_COLUMN} column: add it with fences.setup! (or run #{schema} " \
        "in a migration; docs/FENCES.md, \"Reissued tokens\")"
    end

    # Each engine loads its driver only when it is first used.
    autoload :SQLite, "lease_machines/fences/sqlite"
    autoload :Postgres, "lease_machines/fences/postgres"
    autoload :MySQL, "lease_machines/fences/mysql"
    autoload :Record, "lease_machines/fences/active_record"
  end
end

require_relative "fences/token"
require_relative "fences/pass"
require_relative "fences/refusals"
require_relative "fences/admission"
require "lease_machines/stores/resource_name"
require_relative "fences/stored_token"
require_relative "fences/mark"
require_relative "fences/schema"
require_relative "fences/failures"
require_relative "fences/connections"
require_relative "fences/driver_guard"
require_relative "fences/active_record_connection/guard_transaction"
require_relative "fences/active_record_connection/session"
require_relative "fences/active_record_connection/source"
require_relative "fences/table"
