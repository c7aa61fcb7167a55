# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # A span of seconds given to `hold` (`ttl:`, `renew_after:`,
    # `warn_before:`, `wait:`), checked by docs/API.md's rules for inputs
    # before anything is derived from it: an Integer or a Float (else
    # TypeError), finite and in range (else ArgumentError), each message
    # naming the keyword and the value it got. @api private
    module Seconds
      module_function

      # @param name [Symbol] the keyword
      # @param positive [Boolean] whether 0 is out of range too
      # @return [Integer, Float] the value
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
