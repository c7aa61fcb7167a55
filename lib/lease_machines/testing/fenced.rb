# frozen_string_literal: true

module LeaseMachines
  module Testing
    # `Testing.fenced!`: jobs get their leases as under {Bypass}, and every
    # fenced write (`Fences::Table#guard`, a record's `fenced_update!`) is
    # refused with FencedError before any statement, as if a newer holder
    # had already written: what a job that lost its lease meets.
    class Fenced < Bypass
      def name = :fenced

      # @raise [FencedError] always
      def guard(resource, token)
        raise FencedError.new(resource: resource, token: token, highest: token + 1)
      end
    end
  end
end
