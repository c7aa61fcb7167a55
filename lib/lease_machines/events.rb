# frozen_string_literal: true

# LeaseMachines.subscribe and the runtime's events.
module LeaseMachines
  # What the runtime tells the application (docs/RUNTIME.md).
  module Events
    NAMES = %i[acquire renew release at_risk lost fenced fence_refused elected deposed enqueue_skipped
               force_released].freeze
    @subscribers = [].freeze
    @mutex = Mutex.new

    class << self
      def subscribe(callable) = callable.tap { @mutex.synchronize { @subscribers = (@subscribers + [callable]).freeze } }

      def unsubscribe(callable)
        @mutex.synchronize { @subscribers.include?(callable).tap { @subscribers = (@subscribers - [callable]).freeze } }
      end

      def listened? = !@subscribers.empty? || !active_support.nil?

      def emit(name, payload)
        subscribers = @subscribers
        notifications = active_support
        return if subscribers.empty? && notifications.nil?

        payload = payload.freeze
        subscribers.each do |subscriber|
          subscriber.call(name, payload)
        rescue StandardError => e
          Logging.warning("lease_machines: an event subscriber raised on #{name}: #{e.class}: #{e.message}")
        end
        notifications&.instrument("#{name}.lease_machines", payload)
      end

      private

      def active_support = (::ActiveSupport::Notifications if defined?(::ActiveSupport::Notifications))
    end
  end

  def self.subscribe(callable = nil, &block)
    subscriber = callable || block
    raise ArgumentError, "subscribe needs a block or a callable" if subscriber.nil?
    raise TypeError, "subscriber must respond to #call, got #{subscriber.inspect}" unless subscriber.respond_to?(:call)

    Events.subscribe(subscriber)
  end

  def self.unsubscribe(subscriber) = Events.unsubscribe(subscriber)
end
