# frozen_string_literal: true

module LeaseMachines
  # Points this test process's Sidekiq client at `url`. Two test files use
  # Redis servers of their own: on Sidekiq 6 `redis=` replaces the client's
  # pool, but from 7 on the configuration keeps the pool it built on first
  # use (from whatever URL it had then, localhost:6379 by default) and
  # `redis=` only changes the settings of a pool not built yet; Sidekiq has
  # no public call to drop it, so the test does.
  module SidekiqRedis
    def self.use(url)
      unless ::Sidekiq.respond_to?(:default_configuration)
        ::Sidekiq.configure_client { |config| config.redis = { url: url } }
        return
      end

      config = ::Sidekiq.default_configuration
      config.redis = { url: url }
      config.instance_variable_set(:@redis, nil)
    end
  end
end
