# frozen_string_literal: true

require "logger"

# LeaseMachines.configure: the settings the integrations share.
module LeaseMachines
  # The app-wide defaults the integrations read; every setter checks its value by the rule the leases apply.
  class Configuration
    DEFAULT_TTL = 30
    LOGGER_CALLS = %i[debug info warn error].freeze

    attr_reader :default_ttl

    def initialize
      @lock = Mutex.new
      @store = nil
      @store_builder = nil
      @owner = nil
      @default_ttl = DEFAULT_TTL
      @logger = nil
      @stderr_logger = nil
    end

    def store=(value)
      if value.nil? || value.respond_to?(:authority)
        assign_store(value, nil)
      elsif value.respond_to?(:call)
        assign_store(nil, value)
      else
        raise TypeError, "store must be a store (something with #authority, such as " \
                         "LeaseMachines::Stores::SQLite.new(path)) or a callable returning one, " \
                         "got #{Stores.described(value)}"
      end
    end

    def store? = @lock.synchronize { !(@store || @store_builder).nil? }

    def store
      @lock.synchronize { @store ||= built_store }
    end

    def owner=(value)
      Native::Request.acquire(value, nil, 1) unless value.nil?
      @owner = value
    end

    def owner = @owner.nil? ? LeaseMachines.owner_id : @owner

    def default_ttl=(value)
      value = Runtime::Seconds.plain(value)
      Cadence.new(ttl: value, renew_after: value, warn_before: 0)
      @default_ttl = value
    rescue TypeError, RangeError, ArgumentError => e
      raise e.class, "default_ttl must be a lease ttl (seconds, > 0), got #{Stores.described(value)}: #{e.message}"
    end

    def logger=(value)
      unless value.nil? || LOGGER_CALLS.all? { |call| value.respond_to?(call) }
        raise TypeError, "logger must respond to #{LOGGER_CALLS.map { |call| "##{call}" }.join(', ')} (a Logger), " \
                         "got #{Stores.described(value)}"
      end

      @logger = value
    end

    def logger
      @logger || framework_logger || @lock.synchronize { @stderr_logger ||= Logger.new(Logging::StderrDevice) }
    end

    def inspect = "#<#{self.class.name} store=#{store_shown} owner=#{@owner.inspect} default_ttl=#{@default_ttl.inspect}>"

    private

    def assign_store(store, builder)
      @lock.synchronize do
        @store = store
        @store_builder = builder
      end
    end

    def built_store
      if @store_builder.nil?
        raise NotConfiguredError, "no lease store configured: set LeaseMachines.configure { |c| c.store = ... } " \
                                  "(for example LeaseMachines::Stores::SQLite.new(\"db/leases.sqlite3\"))"
      end

      store = @store_builder.call
      unless store.respond_to?(:authority)
        raise TypeError, "store builder must return a store (something with #authority), got #{Stores.described(store)}"
      end

      @store_builder = nil
      store
    end

    def framework_logger
      return ::Rails.logger if defined?(::Rails) && ::Rails.respond_to?(:logger) && ::Rails.logger

      ::Sidekiq.logger if defined?(::Sidekiq) && ::Sidekiq.respond_to?(:logger)
    end

    def store_shown
      return @store.inspect if @store

      @store_builder ? "(built on first use)" : "nil"
    end
  end

  class << self
    def configure
      yield configuration
      configuration
    end

    def configuration = CONFIGURATION_LOCK.synchronize { @configuration ||= Configuration.new }

    def reset_configuration! = CONFIGURATION_LOCK.synchronize { @configuration = Configuration.new }
  end

  CONFIGURATION_LOCK = Mutex.new
  private_constant :CONFIGURATION_LOCK
end
