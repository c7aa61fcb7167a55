# frozen_string_literal: true

require "lease_machines"
require_relative "errors"

module LeaseMachines
  # Durable authorities: one committed history per resource name, in whole nanoseconds (docs/STORES.md).
  module Stores
    U64_MAX = (2**64) - 1
    TABLE = "lease_machines_resources"
    NANOS_PER_SECOND = 1_000_000_000
    NANOS_PER_MILLISECOND = 1_000_000

    autoload :SQLite, "lease_machines/stores/sqlite"
    autoload :Postgres, "lease_machines/stores/postgres"
    autoload :MySQL, "lease_machines/stores/mysql"
    autoload :Memory, "lease_machines/stores/memory"
    autoload :Schema, "lease_machines/stores/schema"
    autoload :CLI, "lease_machines/stores/cli"
    autoload :Durability, "lease_machines/stores/durability"
  end
end

require_relative "stores/resource_name"
require_relative "stores/holder_label"
require_relative "stores/status"
require_relative "stores/failures"
require_relative "stores/deadline"
require_relative "stores/process_local"
require_relative "stores/batch_renewal"
require_relative "stores/reconciliation"
require_relative "stores/store"
require_relative "stores/durable_authority"
