# frozen_string_literal: true

module LeaseMachines
  class Web
    module SidekiqTab
      # Sidekiq 8: `Sidekiq::Web.configure`, before the first request (Sidekiq freezes its configuration then).
      module Sidekiq8
        def self.register(extension, tab:, index:)
          ::Sidekiq::Web.configure do |config|
            config.register_extension(extension, name: "lease_machines", tab: tab, index: index)
          end
        end
      end
    end
  end
end
