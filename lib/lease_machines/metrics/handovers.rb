# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # When each resource was last released in this process, until its next grant.
    class Handovers
      LIMIT = 1024

      def initialize(limit = LIMIT)
        @limit = limit
        @released_at = {}
      end

      def released(resource, at)
        @released_at.delete(resource)
        @released_at.shift if @released_at.size >= @limit
        @released_at[resource] = at
      end

      def granted(resource, at)
        released_at = @released_at.delete(resource)
        released_at && [at - released_at, 0.0].max
      end
    end
  end
end
