# frozen_string_literal: true

# LeaseMachines.subscribe and the runtime's events.
module LeaseMachines
  # What the runtime tells the application (docs/RUNTIME.md): to
  # {LeaseMachines.subscribe}, and ActiveSupport::Notifications when the
  # application has loaded it (never required here).
  module Events
    NAMES = %i[acquire renew release at_risk lost fenced fence_refused elected deposed enqueue_skipped
               force_released].freeze
    @subscribers = [].freeze
    @mutex = Mutex.new

    class << self
      # @api private
      def subscribe(callable)
        @mutex.synchronize { @subscribers = (@subscribers + [callable]).freeze }
        callable
      end

      # @api private
      def unsubscribe(callable)
        @mutex.synchronize do
          found = @subscribers.include?(callable)
          @subscribers = (@subscribers - [callable]).freeze
          found
        end
      end

      # @return [Boolean] whether anything listens (a subscriber, or
      # ActiveSupport::Notifications): when not, no payload is built
      def listened?
        !@subscribers.empty? || !active_support.nil?
      end

      # Tells every subscriber. A subscriber that raises is reported with a
      # warning and never reaches the runtime's caller.
      # @api private
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

      def active_support
        return nil unless defined?(::ActiveSupport::Notifications)

        ::ActiveSupport::Notifications
      end
    end
  end

  # Calls `block` (or `callable`) with `(name, payload)` for every runtime
  # event (see {Events}). @return the subscriber, for {.unsubscribe}
  def self.subscribe(callable = nil, &block)
    subscriber = callable || block
    raise ArgumentError, "subscribe needs a block or a callable" if subscriber.nil?
    raise TypeError, "subscriber must respond to #call, got #{subscriber.inspect}" unless subscriber.respond_to?(:call)

    Events.subscribe(subscriber)
  end

  # @return [Boolean] whether the subscriber was subscribed
  def self.unsubscribe(subscriber)
    Events.unsubscribe(subscriber)
  end
end
