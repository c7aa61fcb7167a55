# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # The `family` label of a resource: resource names are unbounded (a job
    # per record, say), so the registry never labels by the full name. The
    # default rule takes the name up to its first "/", ":" or space
    # ("reports/2026-12-02" -> "reports", "sync:42" -> "sync", a fenced
    # row's "Report id=42" -> "Report"); a name without one is its own family.
    # A slot of `hold(limit:)` counts as its resource ("exports#slot-2" ->
    # "exports").
    # At most `limit` families are kept; any further one is counted as
    # "other", so memory stays bounded whatever the names.
    class Families
      # The family of a name when no rule is given.
      DEFAULT = lambda do |resource|
        resource = Runtime::Slots.limited(resource)
        resource[%r{\A[^/: ]+}] || resource
      end
      OTHER = "other"

      # @param rule [#call] resource name -> family (a String)
      # @param limit [Integer] how many distinct families to keep
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

      # Inside the registry's Mutex.
      # @return [String] the family of `resource` ("other" past the limit)
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
