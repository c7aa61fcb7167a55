# frozen_string_literal: true

require "logger"

module LeaseMachines
  # Sidekiq's logger set to discard, in each version's spelling:
  # `Sidekiq.logger=` (6.x), `Sidekiq.default_configuration.logger=` (7 and 8).
  module QuietSidekiq
    def self.logger!
      quiet = Logger.new(File::NULL)
      return ::Sidekiq.logger = quiet if ::Sidekiq.respond_to?(:logger=)

      ::Sidekiq.default_configuration.logger = quiet
    end
  end
end
