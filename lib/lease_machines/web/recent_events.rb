# frozen_string_literal: true

module LeaseMachines
  class Web
    # The last events this process saw ({LeaseMachines.subscribe}), of every
    # resource, in a ring of fixed size: what a resource's page lists. One
    # per process ({.shared}), subscribed when the first UI that shows events
    # is built: the events of other processes (the workers) are not in it.
    class RecentEvents
      # Events kept, of all resources together.
      CAPACITY = 1000

      # One event: when this process saw it, its name, its payload.
      Entry = Struct.new(:at, :name, :payload)

      SHARED_LOCK = Mutex.new
      private_constant :SHARED_LOCK

      # @return [RecentEvents] the process's ring, subscribed on first use
      def self.shared
        SHARED_LOCK.synchronize { @shared ||= new(CAPACITY).install }
      end

      # @return [Time] when it began listening
      attr_reader :since
      # @return [Integer]
      attr_reader :capacity

      def initialize(capacity)
        unless capacity.is_a?(Integer) && capacity.positive?
          raise ArgumentError, "capacity must be a positive Integer, got #{capacity.inspect}"
        end

        @capacity = capacity
        @entries = []
        @next = 0
        @lock = Mutex.new
        @since = Time.now
      end

      # @return [self]
      def install
        LeaseMachines.subscribe(self)
        self
      end

      # The subscriber: keeps the event, dropping the oldest when full.
      def call(name, payload)
        entry = Entry.new(Time.now, name, payload).freeze
        @lock.synchronize do
          @entries[@next] = entry
          @next = (@next + 1) % @capacity
        end
        nil
      end

      # @return [Array<Entry>] the kept events of `resource`, newest first
      def of(resource)
        @lock.synchronize do
          oldest_first = @entries.size < @capacity ? @entries : @entries[@next..] + @entries[0, @next]
          oldest_first.select { |entry| entry.payload[:resource] == resource }
        end.reverse!
      end
    end
  end
end
