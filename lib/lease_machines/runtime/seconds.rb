# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # A span of seconds given to `hold`, checked by docs/API.md's rules before anything is derived from it.
    module Seconds
      module_function

      def plain(value) = defined?(::ActiveSupport::Duration) && value.is_a?(::ActiveSupport::Duration) ? value.value : value

      def optional(name, value, positive:) = value.nil? ? nil : check(name, value, positive: positive)

      def check(name, value, positive:)
        unless value.is_a?(Integer) || value.is_a?(Float)
          raise TypeError, "#{name} must be an Integer or Float number of seconds, got #{value.inspect}"
        end
        return value if (value.is_a?(Integer) || value.finite?) && (positive ? value.positive? : !value.negative?)

        raise ArgumentError, "#{name} must be a finite, #{positive ? 'positive' : 'non-negative'} number of seconds, " \
                             "got #{value.inspect}"
      end
    end
  end
end
