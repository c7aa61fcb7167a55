# frozen_string_literal: true

require "sidekiq/testing"
require "lease_machines/sidekiq"

module LeaseMachines
  module Sidekiq
    # `require "lease_machines/sidekiq/testing"` in a test helper (it requires sidekiq/testing).
    module Testing
      def self.install
        server = ::Sidekiq.respond_to?(:default_configuration) ? ::Sidekiq.default_configuration : ::Sidekiq
        [::Sidekiq::Testing.server_middleware, server.server_middleware].each do |chain|
          chain.add(ServerMiddleware) unless chain.exists?(ServerMiddleware)
        end
      end
    end
  end
end

LeaseMachines::Sidekiq::Testing.install
