# frozen_string_literal: true

# LeaseMachines.subscribe and the runtime's events.
module LeaseMachines
  # What the runtime tells the application (docs/RUNTIME.md).
  module Events
    NAMES = %i[acquire renew release at_risk lost fenced fence_refused elected deposed enqueue_skipped
               force_released].freeze
    # Each event's name in ActiveSupport::Notifications.
    NOTIFICATIONS = NAMES.to_h { |name| [name, "#{name}.lease_machines".freeze] }.freeze
    @subscribers = [].freeze
    @mutex = Mutex.new

    class << self
      def subscribe(callable) = callable.tap { @mutex.synchronize { @subscribers = (@subscribers + [callable]).freeze } }

      def unsubscribe(callable)
        @mutex.synchronize { @subscribers.include?(callable).tap { @subscribers = (@subscribers - [callable]).freeze } }
      end

      # Whether event `name` reaches anyone: a LeaseMachines.subscribe subscriber, or an ActiveSupport::Notifications
      # listener of it that is not silenced (ActiveSupport 7.1+ silences a log subscriber below its logger's level).
      # Nothing is built for an event nobody hears: loading ActiveSupport alone costs a hold nothing.
      def listened?(name)
        return true unless @subscribers.empty?

        notifications = active_support
        !notifications.nil? && listening?(notifications.notifier, NOTIFICATIONS.fetch(name))
      end

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
        notifications&.instrument(NOTIFICATIONS.fetch(name), payload)
      end

      private

      # A notifier of the application's own making may not say: taken as listening.
      def listening?(notifier, name) = !notifier.respond_to?(:listening?) || notifier.listening?(name)

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
