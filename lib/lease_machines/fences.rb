# frozen_string_literal: true

require "lease_machines"
require_relative "fenced_error"

module LeaseMachines
  # Fences at the protected resource, kept in its own database (docs/FENCES.md).
  module Fences
    TABLE = "lease_machines_fences"
    # The lease store's table, read by a fence bound to its store (`store: true`).
    STORE_TABLE = "lease_machines_resources"
    STORE_TABLE_HINT = "a fence bound to its store (store: true) needs the store's table in its database: create " \
                       "it with the store's setup! (LeaseMachines::Stores::SQLite, Stores::Postgres or " \
                       "Stores::MySQL, on this database)"
    # The owner of the grant whose token set the mark; a table made before it lacks it.
    OWNER_COLUMN = "lease_owner"

    # The marks of every engine but MySQL, per {Admission} mode (`name`: how a mark names
    # the table's row): an unbound mark inserts `unbound` (its VALUES, or a SELECT); a bound
    # one selects `selected` from the store's row where `issued` (or `live`) holds, so a token
    # it refuses writes nothing. On conflict the mark rises to a greater token (recording its
    # owner, or NULL), or stays at an equal one (recording it when none was), unless both name
    # owners that differ.
    def self.mark_sqls(name, unbound, selected, issued:, live:)
      insert = "INSERT INTO #{TABLE}#{" AS #{name}" unless name == TABLE} (resource, highest, lease_owner)"
      from = "SELECT #{selected} FROM #{STORE_TABLE} AS store WHERE"
      conflict = "ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest, lease_owner = CASE WHEN #{name}.highest " \
                 "= excluded.highest THEN coalesce(#{name}.lease_owner, excluded.lease_owner) ELSE excluded.lease_owner " \
                 "END WHERE #{name}.highest IS NULL OR #{name}.highest < excluded.highest OR (#{name}.highest = " \
                 "excluded.highest AND (#{name}.lease_owner IS NULL OR excluded.lease_owner IS NULL OR " \
                 "#{name}.lease_owner = excluded.lease_owner))"
      { any: "#{insert} #{unbound} #{conflict}", issued: "#{insert} #{from} #{issued} #{conflict}",
        live: "#{insert} #{from} #{live} #{conflict}" }.freeze
    end

    # The fence table's SQL of `engine`, from db/<engine>/002_*.sql.
    def self.schema_sql(engine) = Stores::Schema.read("db/#{engine}/002_create_lease_machines_fences.sql")

    autoload :SQLite, "lease_machines/fences/sqlite"
    autoload :Postgres, "lease_machines/fences/postgres"
    autoload :MySQL, "lease_machines/fences/mysql"
    autoload :Record, "lease_machines/fences/active_record"
  end
end

require "lease_machines/stores/resource_name"
require "lease_machines/stores/schema"
require_relative "fences/token"
require_relative "fences/admission"
require_relative "fences/failures"
require_relative "fences/driver_guard"
require_relative "fences/active_record_connection"
require_relative "fences/table"
