# frozen_string_literal: true

module LeaseMachines
  class Web
    module SidekiqTab
      # Sidekiq 6 (and 7.0 to 7.2): `Sidekiq::Web.register(extension)` calls
      # `extension.registered(app)`; the tab is an entry of `Sidekiq::Web.tabs`.
      module Sidekiq6
        def self.register(extension, tab:, index:)
          ::Sidekiq::Web.register(extension)
          ::Sidekiq::Web.tabs[tab] = index
        end
      end
    end
  end
end
