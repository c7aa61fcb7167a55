# frozen_string_literal: true

module LeaseMachines
  class Web
    # The last events this process saw ({LeaseMachines.subscribe}), of every resource, in a ring of fixed size.
    class RecentEvents
      CAPACITY = 1000

      Entry = Struct.new(:at, :name, :payload)

      SHARED_LOCK = Mutex.new
      private_constant :SHARED_LOCK

      def self.shared = SHARED_LOCK.synchronize { @shared ||= new(CAPACITY).install }

      attr_reader :since, :capacity

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

      def install
        LeaseMachines.subscribe(self)
        self
      end

      def call(name, payload)
        entry = Entry.new(Time.now, name, payload).freeze
        @lock.synchronize do
          @entries[@next] = entry
          @next = (@next + 1) % @capacity
        end
        nil
      end

      def of(resource)
        @lock.synchronize do
          oldest_first = @entries.size < @capacity ? @entries : @entries[@next..] + @entries[0, @next]
          oldest_first.select { |entry| entry.payload[:resource] == resource }
        end.reverse!
      end
    end
  end
end
