# frozen_string_literal: true

module LeaseMachines
  class Web
    module SidekiqTab
      # Sidekiq 8: `Sidekiq::Web.configure { |config| config.register_extension(...) }`
      # (`Sidekiq::Web.register` is deprecated there). Sidekiq freezes its
      # configuration when it serves its first request: register before.
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
