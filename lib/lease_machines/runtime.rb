# frozen_string_literal: true

require "socket"
require_relative "runtime/monotonic_clock"
require_relative "runtime/seconds"
require_relative "runtime/outcome"
require_relative "runtime/callbacks"
require_relative "runtime/slots"
require_relative "runtime/label"
require_relative "runtime/lease_calls"
require_relative "runtime/renewal"
require_relative "runtime/held"
require_relative "runtime/acquisition"
require_relative "runtime/due_queue"
require_relative "runtime/scheduler"
require_relative "runtime/hold_call"
require_relative "runtime/holding"
require_relative "runtime/elector"
require_relative "events"

# Runtime: holding leases in production (docs/RUNTIME.md); LeaseMachines.owner_id, a hold's default owner.
module LeaseMachines
  NO_NAME = Object.new.freeze
  private_constant :NO_NAME

  # FNV-1a (64-bit) of the name; no name: this host, process and thread.
  def self.owner_id(name = NO_NAME)
    name = "#{Socket.gethostname}/#{Process.pid}/#{Thread.current.object_id}" if NO_NAME.equal?(name)
    Native.owner_id_of(name)
  end
end
