# frozen_string_literal: true

module LeaseMachines
  # The one switch the test modes (lib/lease_machines/testing/) turn; nil unless a test turned one on.
  module TestMode
    @current = nil

    class << self
      attr_accessor :current
    end
  end
end
