# frozen_string_literal: true

module LeaseMachines
  class Web
    # The last events this process saw ({LeaseMachines.subscribe}), of every resource, in a ring of fixed size.
    class RecentEvents
      CAPACITY = 1000

      Entry = Struct.new(:at, :name, :payload)

      SHARED_LOCK = Mutex.new
      private_constant :SHARED_LOCK

      def self.shared = SHARED_LOCK.synchronize { @shared ||= new(CAPACITY).tap { |events| LeaseMachines.subscribe(events) } }

      attr_reader :since, :capacity

      def initialize(capacity)
        @capacity = capacity
        @entries = []
        @next = 0
        @lock = Mutex.new
        @since = Time.now
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
