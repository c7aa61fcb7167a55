# frozen_string_literal: true

require "rails/railtie"
require_relative "default_store"
require_relative "log_subscriber"

module LeaseMachines
  module Rails
    # Loaded by `require "lease_machines"` when Rails is already loaded (an app's
    # Bundler.require), never otherwise. It gives the app a default store (its
    # own primary database through ActiveRecord::Base, built on first use, see
    # {DefaultStore}) unless config/initializers/lease_machines.rb sets one,
    # loads the ActiveJob integration with ActiveJob, and writes lease events
    # to the Rails logger.
    # `rails generate lease_machines:install` writes that initializer and a
    # migration for the store and fence tables.
    class Railtie < ::Rails::Railtie
      initializer "lease_machines.default_store" do
        ActiveSupport.on_load(:active_record) do
          config = LeaseMachines.configuration
          config.store = -> { DefaultStore.for(::ActiveRecord::Base) } unless config.store?
        end
      end

      # `include LeaseMachines::ActiveJob` works in the app's jobs without a require.
      initializer "lease_machines.active_job" do
        ActiveSupport.on_load(:active_job) { require "lease_machines/active_job" }
      end

      initializer "lease_machines.log_subscriber" do
        LogSubscriber.attach_to :lease_machines
      end
    end
  end
end
