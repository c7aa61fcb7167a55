# frozen_string_literal: true

module LeaseMachines
  module Testing
    # `Testing.fenced!`: leases as under {Bypass}, every fenced write refused with FencedError before any statement.
    class Fenced < Bypass
      def name = :fenced

      def guard(resource, token)
        raise FencedError.new(resource: resource, token: token, highest: token + 1)
      end
    end
  end
end
