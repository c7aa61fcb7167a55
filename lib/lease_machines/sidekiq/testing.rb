# frozen_string_literal: true

require "sidekiq/testing"
require "lease_machines/sidekiq"

module LeaseMachines
  module Sidekiq
    # `require "lease_machines/sidekiq/testing"` in a test helper (it
    # requires sidekiq/testing): Sidekiq::Testing's inline!, fake! + drain
    # run Sidekiq::Testing.server_middleware, and perform_inline the
    # process's server chain, not the chain a sidekiq server configures; the
    # lease middleware joins both, once, so a test runs a leased job as a
    # server would (docs/JOBS.md).
    module Testing
      # Adds the middleware to Sidekiq::Testing's chain and the server chain.
      def self.install
        [::Sidekiq::Testing.server_middleware, server_chain].each do |chain|
          chain.add(ServerMiddleware) unless chain.exists?(ServerMiddleware)
        end
      end

      # The chain perform_inline runs: the default configuration's from 7.0.
      def self.server_chain
        return ::Sidekiq.server_middleware unless ::Sidekiq.respond_to?(:default_configuration)

        ::Sidekiq.default_configuration.server_middleware
      end
    end
  end
end

LeaseMachines::Sidekiq::Testing.install
