# frozen_string_literal: true

require_relative "lease_machines/version"
require_relative "lease_machines/errors"
require_relative "lease_machines/native"
require_relative "lease_machines/value_object"
require_relative "lease_machines/lease"
require_relative "lease_machines/decision"
require_relative "lease_machines/checkpoint"
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
  autoload :Stores, "lease_machines/stores"
  autoload :Fences, "lease_machines/fences"
  autoload :FencedError, "lease_machines/fenced_error"
  autoload :Signing, "lease_machines/signing/keys"
  autoload :Metrics, "lease_machines/metrics"
  autoload :NamePattern, "lease_machines/name_pattern"
  autoload :Web, "lease_machines/web"
end

require_relative "lease_machines/rails/railtie" if defined?(::Rails::Railtie)
