# frozen_string_literal: true

require "sidekiq/testing"
require "lease_machines/sidekiq"

module LeaseMachines
  module Sidekiq
    # `require "lease_machines/sidekiq/testing"` in a test helper (it requires sidekiq/testing).
    module Testing
      def self.install
        [::Sidekiq::Testing.server_middleware, server_chain].each do |chain|
          chain.add(ServerMiddleware) unless chain.exists?(ServerMiddleware)
        end
      end

      def self.server_chain
        return ::Sidekiq.server_middleware unless ::Sidekiq.respond_to?(:default_configuration)

        ::Sidekiq.default_configuration.server_middleware
      end
    end
  end
end

LeaseMachines::Sidekiq::Testing.install
