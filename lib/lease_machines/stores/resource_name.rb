# frozen_string_literal: true

module LeaseMachines
  # Resource names: what {Store#authority}, {Store#status} and
  # {Store#force_release} accept, and what a fence accepts as `resource`
  # (Fences::ResourceName), so one name can be a lease's and its fence's.
  module Stores
    # Resource names are 1..255 bytes of UTF-8 without NUL, compared byte for
    # byte.
    NAME_MAX_BYTES = 255
    KERNEL_CLASS = Kernel.instance_method(:class)
    KERNEL_INSPECT = Kernel.instance_method(:inspect)
    private_constant :KERNEL_CLASS, :KERNEL_INSPECT

    class << self
      # Validates a resource name and returns it as a frozen UTF-8 String.
      # `argument` is how the messages name it.
      def resource_name(name, argument: "name")
        # String === name asks the class, not the object (a BasicObject too).
        unless String === name # rubocop:disable Style/CaseEquality
          raise TypeError, "#{argument} must be a String (the resource name), got #{described(name)}"
        end

        utf8 = utf8_name(name, argument)
        raise ArgumentError, "#{argument} must not be empty, got #{name.inspect}" if utf8.empty?

        if utf8.bytesize > NAME_MAX_BYTES
          raise ArgumentError, "#{argument} must be at most #{NAME_MAX_BYTES} bytes, got #{utf8.bytesize} bytes: " \
                               "#{utf8[0, 40].inspect}..."
        end
        raise ArgumentError, "#{argument} must not contain NUL bytes, got #{name.inspect}" if utf8.include?("\0")

        -utf8
      end

      # How a refused argument is shown in a message: `:nightly (Symbol)`. The
      # class is the object's real one (whatever it says of itself), and an
      # object without `inspect` (a BasicObject) is shown as Kernel would.
      def described(value)
        shown = begin
          value.inspect
        rescue NoMethodError
          KERNEL_INSPECT.bind_call(value)
        end
        "#{shown} (#{KERNEL_CLASS.bind_call(value)})"
      end

      private

      def utf8_name(name, argument)
        utf8 = name.encode(Encoding::UTF_8)
        return utf8 if utf8.valid_encoding?

        raise ArgumentError, "#{argument} must be valid UTF-8, got #{name.inspect}"
      rescue EncodingError
        raise ArgumentError, "#{argument} must be valid UTF-8, got #{name.inspect} (#{name.encoding})"
      end
    end
  end
end
