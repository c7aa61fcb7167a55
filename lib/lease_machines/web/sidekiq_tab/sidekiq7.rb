# frozen_string_literal: true

module LeaseMachines
  class Web
    module SidekiqTab
      # Sidekiq 7.3: `Sidekiq::Web.register(extension, name:, tab:, index:)`
      # adds the tab and calls `extension.registered(app)`.
      module Sidekiq7
        def self.register(extension, tab:, index:)
          ::Sidekiq::Web.register(extension, name: "lease_machines", tab: tab, index: index)
        end
      end
    end
  end
end
