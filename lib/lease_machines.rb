# frozen_string_literal: true

require_relative "lease_machines/version"
# Before the extension, which resolves the error classes it raises when it loads.
require_relative "lease_machines/errors"
require_relative "lease_machines/native"
require_relative "lease_machines/value_object"
require_relative "lease_machines/lease"
require_relative "lease_machines/decision"
require_relative "lease_machines/checkpoint"
# Before Authority, which includes Runtime::Holding (`hold`).
require_relative "lease_machines/runtime"
require_relative "lease_machines/authority"
require_relative "lease_machines/fence"
require_relative "lease_machines/cadence"
require_relative "lease_machines/holder"
require_relative "lease_machines/configuration"
require_relative "lease_machines/test_mode"
require_relative "lease_machines/logging"

# Time-limited ownership of a resource with fencing tokens. See the README.
module LeaseMachines
  # Stores and fences load their database drivers only when used.
  autoload :Stores, "lease_machines/stores"
  autoload :Fences, "lease_machines/fences"
  autoload :FencedError, "lease_machines/fenced_error"
  autoload :Signing, "lease_machines/signing/keys"
  autoload :Metrics, "lease_machines/metrics"
  autoload :NamePattern, "lease_machines/name_pattern"
  # The operators' web UI (docs/OPERATIONS.md#web-ui): a Rack app.
  autoload :Web, "lease_machines/web"
end

# Inside a Rails app (Rails is loaded before its gems), the Railtie.
require_relative "lease_machines/rails/railtie" if defined?(::Rails::Railtie)
