# frozen_string_literal: true

module LeaseMachines
  # The one switch the test modes of lib/lease_machines/testing/ turn
  # (`LeaseMachines::Testing.bypass!`, `.occupied!`, `.fenced!`). nil unless
  # a test turned one on: the code it reaches reads it once, one branch, at
  # two places (Jobs::LeasedRun.call, before a job's lease is taken, and the
  # fences' guard and fenced_update!, before any statement).
  module TestMode
    @current = nil

    class << self
      # @return [#hold, #guard, nil] the mode in force; set by Testing::Mode only
      attr_accessor :current
    end
  end
end
