# frozen_string_literal: true

module LeaseMachines
  module Fences
    # The rules for a token shown to a fence, as the rest of the gem words
    # them (`LeaseMachines::Fence#accept`): an Integer in 0..2**64-1, nothing
    # converted. 0 is accepted as an argument and then refused as stale,
    # because it is never issued.
    #
    # The one place a fence reads a token argument: a token of another form
    # (a signed token, say) would be checked here.
    module Token
      MAX = (2**64) - 1
      RANGE = "0..#{MAX}".freeze
      KERNEL_CLASS = Kernel.instance_method(:class)
      KERNEL_INSPECT = Kernel.instance_method(:inspect)
      private_constant :KERNEL_CLASS, :KERNEL_INSPECT

      class << self
        # @return [Integer] `value`, checked
        # @raise [TypeError] for anything but an Integer
        # @raise [RangeError] for an Integer outside 0..2**64-1
        def check(value, name = "token")
          # Integer === value asks the class, not the object: an object that
          # claims to be an Integer (is_a?, to_int) is not one.
          unless Integer === value # rubocop:disable Style/CaseEquality
            raise TypeError, "#{name} must be an Integer in #{RANGE}, got #{describe(value)}"
          end
          raise RangeError, "#{name} must be an Integer in #{RANGE}, got #{value}" if value.negative? || value > MAX

          value
        end

        # How a refused argument is shown in a message: `"1" (String)`. The
        # class is the object's real one (whatever it says of itself), and an
        # object without `inspect` (a BasicObject) is shown as Kernel would.
        def describe(value)
          shown = begin
            value.inspect
          rescue NoMethodError
            KERNEL_INSPECT.bind_call(value)
          end
          "#{shown} (#{KERNEL_CLASS.bind_call(value)})"
        end
      end
    end
  end
end
