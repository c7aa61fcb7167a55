# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # The `family` label of a resource: resource names are unbounded (a job
    # per record, say), so the registry never labels by the full name. The
    # default rule takes the name up to its first "/", ":" or space
    # ("reports/2026-12-02" -> "reports", "sync:42" -> "sync", a fenced
    # row's "Report id=42" -> "Report"); a name without one is its own family.
    # At most `limit` families are kept; any further one is counted as
    # "other", so memory stays bounded whatever the names.
    class Families
      # The family of a name when no rule is given.
      DEFAULT = ->(resource) { resource[%r{\A[^/: ]+}] || resource }
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
        @known = {}
      end

      # Inside the registry's Mutex.
      # @return [String] the family of `resource` ("other" past the limit)
      def of(resource)
        return OTHER unless resource.is_a?(String)

        family = @rule.call(resource).to_s
        return family if @known.key?(family)
        return OTHER if @known.size >= @limit

        @known[family.dup.freeze] = true
        family
      end
    end
  end
end
