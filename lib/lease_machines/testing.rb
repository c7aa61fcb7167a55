# frozen_string_literal: true

require "lease_machines"
require_relative "testing/clock"
require_relative "testing/mode"
require_relative "testing/bypass"
require_relative "testing/occupied"
require_relative "testing/fenced"
require_relative "testing/assertions"

module LeaseMachines
  # Test helpers: {Testing::Clock}, {Stores::Memory} (autoloaded with the
  # stores), the test modes ({Testing.bypass!}, {Testing.occupied!},
  # {Testing.fenced!}, {Testing.disable!}) and {Testing::Assertions}.
  module Testing
  end
end
