# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # When each resource was last released in this process, until its next
    # grant: the handover latency one process can see. Bounded: past `limit`
    # resources awaiting a grant, the oldest release is forgotten.
    class Handovers
      LIMIT = 1024

      def initialize(limit = LIMIT)
        @limit = limit
        @released_at = {}
      end

      # Inside the registry's Mutex.
      def released(resource, at)
        @released_at.delete(resource)
        @released_at.shift if @released_at.size >= @limit
        @released_at[resource] = at
      end

      # Inside the registry's Mutex.
      # @return [Float, nil] seconds since the resource's release, nil when
      #   this process saw none
      def granted(resource, at)
        released_at = @released_at.delete(resource)
        released_at && [at - released_at, 0.0].max
      end

      # @return [Integer] releases awaiting a grant
      def size
        @released_at.size
      end
    end
  end
end
