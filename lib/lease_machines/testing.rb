# frozen_string_literal: true

require "lease_machines"
require_relative "testing/clock"
require_relative "testing/mode"
require_relative "testing/assertions"

module LeaseMachines
  # Test helpers.
  module Testing
  end
end
