# frozen_string_literal: true

module LeaseMachines
  module Stores
    module Connections
      # A session on an ActiveRecord adapter's raw connection, reconnected through the adapter (`reconnect!`).
      module AdapterSession
        def self.reconnect(adapter)
          adapter.reconnect!
        rescue StandardError => e
          raise Failures.reconnect_failed("ActiveRecord", e)
        end

        def initialize(adapter)
          super(adapter.raw_connection)
          @adapter = adapter
        end

        private

        def reconnect_adapter = AdapterSession.reconnect(@adapter)
      end
    end
  end
end
