# frozen_string_literal: true

module LeaseMachines
  # Resource names: the one check of what a store and a fence accept as a resource.
  module Stores
    # 1..255 bytes of UTF-8 without NUL, compared byte for byte.
    NAME_MAX_BYTES = 255
    # Encodings taken as their bytes: UTF-8, binary, and US-ASCII (Ruby tags ARGV and ENV so under LC_ALL=C).
    BYTES_AS_THEY_ARE = [Encoding::UTF_8, Encoding::BINARY, Encoding::US_ASCII].freeze
    KERNEL_CLASS = Kernel.instance_method(:class)
    KERNEL_INSPECT = Kernel.instance_method(:inspect)
    STRING_ENCODING = String.instance_method(:encoding)
    STRING_ASCII_ONLY = String.instance_method(:ascii_only?)
    private_constant :KERNEL_CLASS, :KERNEL_INSPECT, :STRING_ENCODING, :STRING_ASCII_ONLY

    class << self
      # A resource name's bytes as a frozen UTF-8 String, never transcoded: a String in an encoding other
      # than UTF-8, binary or US-ASCII only when ASCII only. `argument` is how the messages name it.
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

      # How a refused argument is shown: `:nightly (Symbol)`, the object's real class, even for a BasicObject.
      def described(value)
        shown = begin
          value.inspect
        rescue NoMethodError
          KERNEL_INSPECT.bind_call(value)
        end
        "#{shown} (#{KERNEL_CLASS.bind_call(value)})"
      end

      # @api private: the name's bytes as a new UTF-8 String, by {.resource_name}'s rule (a label's too).
      def utf8_name(name, argument)
        encoding = STRING_ENCODING.bind_call(name)
        unless BYTES_AS_THEY_ARE.include?(encoding) || (encoding.ascii_compatible? && STRING_ASCII_ONLY.bind_call(name))
          raise ArgumentError, "#{argument} must be UTF-8, got #{name.inspect} (#{encoding}): a name is its bytes, " \
                               "never transcoded; encode it to UTF-8 first"
        end

        utf8 = String.new(name).force_encoding(Encoding::UTF_8) # String.new's encoding: would make a Hash each call
        return utf8 if utf8.valid_encoding?

        shown = encoding == Encoding::UTF_8 ? name.inspect : "#{name.inspect} (#{encoding})"
        raise ArgumentError, "#{argument} must be valid UTF-8, got #{shown}"
      end
    end
  end
end
