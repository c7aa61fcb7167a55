# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # The bounded `family` label of a resource name: its part up to the first "/", ":" or space by default.
    class Families
      DEFAULT = lambda do |resource|
        resource = Runtime::Slots.limited(resource)
        resource[%r{\A[^/: ]+}] || resource
      end
      OTHER = "other"

      def initialize(rule, limit)
        raise TypeError, "family must respond to #call or be false, got #{rule.inspect}" unless rule.respond_to?(:call)

        unless limit.is_a?(Integer) && limit.positive?
          raise ArgumentError, "max_families must be a positive Integer, got #{limit.inspect}"
        end

        @rule = rule
        @limit = limit
        @known = {} # family => itself, frozen
        @recent = {} # resource name => its family, a cache of CACHE names at most
      end

      CACHE = 4096

      def of(resource)
        return OTHER unless resource.is_a?(String)

        @recent.fetch(resource) do
          @recent.clear if @recent.size >= CACHE
          @recent[resource] = family(@rule.call(resource).to_s)
        end
      end

      private

      def family(name)
        @known.fetch(name) do
          next OTHER if @known.size >= @limit

          frozen = name.dup.freeze
          @known[frozen] = frozen
        end
      end
    end
  end
end
