# frozen_string_literal: true

require "lease_machines"
require_relative "testing/clock"

module LeaseMachines
  # Test helpers: {Testing::Clock}, and {Stores::Memory} (autoloaded with the
  # stores).
  module Testing
  end
end
