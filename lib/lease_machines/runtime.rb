# frozen_string_literal: true

require_relative "runtime/owner_id"
require_relative "runtime/monotonic_clock"
require_relative "runtime/errors"
require_relative "runtime/seconds"
require_relative "runtime/outcome"
require_relative "runtime/callbacks"
require_relative "runtime/slots"
require_relative "runtime/label"
require_relative "runtime/lease_calls"
require_relative "runtime/renewal"
require_relative "runtime/renewal_batch"
require_relative "runtime/held"
require_relative "runtime/acquisition"
require_relative "runtime/due_queue"
require_relative "runtime/scheduler"
require_relative "runtime/hold_call"
require_relative "runtime/holding"
require_relative "runtime/elector"
require_relative "events"

module LeaseMachines
  # Holding leases in production (docs/RUNTIME.md).
  module Runtime
  end
end
