# frozen_string_literal: true

module LeaseMachines
  VERSION = "0.4.0"
end
