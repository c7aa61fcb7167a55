# frozen_string_literal: true

module LeaseMachines
  # Resource names: what {Store#authority}, {Store#status} and
  # {Store#force_release} accept, and what a fence accepts as `resource`
  # (Fences::Table#guard, #highest, Fences::Pass), so one name can be a
  # lease's and its fence's. This is the one check of a resource name.
  module Stores
    # Resource names are 1..255 bytes of UTF-8 without NUL, compared byte for
    # byte.
    NAME_MAX_BYTES = 255
    # Encodings whose Strings are taken as their bytes: UTF-8 itself, and
    # the two that say nothing else of bytes past ASCII (binary has no
    # characters; US-ASCII has none past 127, so such bytes are not ASCII
    # either: Ruby tags ARGV and ENV so under LC_ALL=C).
    BYTES_AS_THEY_ARE = [Encoding::UTF_8, Encoding::BINARY, Encoding::US_ASCII].freeze
    KERNEL_CLASS = Kernel.instance_method(:class)
    KERNEL_INSPECT = Kernel.instance_method(:inspect)
    STRING_ENCODING = String.instance_method(:encoding)
    STRING_ASCII_ONLY = String.instance_method(:ascii_only?)
    private_constant :KERNEL_CLASS, :KERNEL_INSPECT, :STRING_ENCODING, :STRING_ASCII_ONLY

    class << self
      # Validates a resource name and returns its bytes as a frozen UTF-8
      # String. A name is its bytes, never transcoded: a String tagged UTF-8,
      # binary (ASCII-8BIT) or US-ASCII is taken as its bytes, which must be
      # valid UTF-8; a String in another encoding only when it is ASCII only
      # (the same bytes in UTF-8), and is refused otherwise (its bytes would
      # name another resource than its characters; encode it to UTF-8).
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

      # @api private: the name's bytes as a new UTF-8 String (never the
      # caller's object), by the rule of {.resource_name} (also a holder's label's).
      def utf8_name(name, argument)
        encoding = STRING_ENCODING.bind_call(name)
        unless BYTES_AS_THEY_ARE.include?(encoding) || (encoding.ascii_compatible? && STRING_ASCII_ONLY.bind_call(name))
          raise ArgumentError, "#{argument} must be UTF-8, got #{name.inspect} (#{encoding}): a name is its bytes, " \
                               "never transcoded; encode it to UTF-8 first"
        end

        utf8 = String.new(name, encoding: Encoding::UTF_8)
        return utf8 if utf8.valid_encoding?

        shown = encoding == Encoding::UTF_8 ? name.inspect : "#{name.inspect} (#{encoding})"
        raise ArgumentError, "#{argument} must be valid UTF-8, got #{shown}"
      end
    end
  end
end
