# frozen_string_literal: true

require_relative "runtime/owner_id"
require_relative "runtime/monotonic_clock"

module LeaseMachines
  # Holding leases in production: {LeaseMachines.owner_id}, `hold`/`hold!`
  # (on every authority), the one renewal thread of the process, events and
  # the elector. See docs/RUNTIME.md.
  module Runtime
  end
end
