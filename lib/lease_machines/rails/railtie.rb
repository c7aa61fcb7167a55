# frozen_string_literal: true

require "rails/railtie"
require_relative "default_store"
require_relative "log_subscriber"

module LeaseMachines
  module Rails
    # Loaded only when Rails is: a default store ({DefaultStore}) unless the
    # initializer sets one, the ActiveJob integration, lease events in the log.
    class Railtie < ::Rails::Railtie
      initializer "lease_machines.default_store" do
        ActiveSupport.on_load(:active_record) do
          config = LeaseMachines.configuration
          config.store = -> { DefaultStore.for(::ActiveRecord::Base) } unless config.store?
        end
      end

      initializer "lease_machines.active_job" do
        ActiveSupport.on_load(:active_job) { require "lease_machines/active_job" }
      end

      initializer "lease_machines.log_subscriber" do
        LogSubscriber.attach_to :lease_machines
      end
    end
  end
end
