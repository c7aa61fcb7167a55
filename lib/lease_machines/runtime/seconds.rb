# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # A span of seconds given to `hold`, checked by docs/API.md's rules for
    # inputs before anything is derived from it. @api private
    module Seconds
      module_function

      # @return [Object] an ActiveSupport::Duration's seconds (`30.seconds`
      #   is 30); anything else as given, for {.check} or the caller's rule
      def plain(value)
        defined?(::ActiveSupport::Duration) && value.is_a?(::ActiveSupport::Duration) ? value.value : value
      end

      # {.check} of a keyword whose nil means "not given". @return [Integer, Float, nil]
      def optional(name, value, positive:)
        value.nil? ? nil : check(name, value, positive: positive)
      end

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
