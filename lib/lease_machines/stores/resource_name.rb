# frozen_string_literal: true

module LeaseMachines
  # Resource names: what {Store#authority}, {Store#status} and
  # {Store#force_release} accept.
  module Stores
    # Resource names are 1..255 bytes of UTF-8 without NUL, compared byte for
    # byte.
    NAME_MAX_BYTES = 255

    class << self
      # Validates a resource name and returns it as a frozen UTF-8 String.
      def resource_name(name)
        unless name.is_a?(String)
          raise TypeError, "name must be a String (the resource name), got #{name.inspect} (#{name.class})"
        end

        utf8 = utf8_name(name)
        raise ArgumentError, "name must not be empty, got #{name.inspect}" if utf8.empty?

        if utf8.bytesize > NAME_MAX_BYTES
          raise ArgumentError, "name must be at most #{NAME_MAX_BYTES} bytes, got #{utf8.bytesize} bytes: " \
                               "#{utf8[0, 40].inspect}..."
        end
        raise ArgumentError, "name must not contain NUL bytes, got #{name.inspect}" if utf8.include?("\0")

        -utf8
      end

      private

      def utf8_name(name)
        utf8 = name.encode(Encoding::UTF_8)
        return utf8 if utf8.valid_encoding?

        raise ArgumentError, "name must be valid UTF-8, got #{name.inspect}"
      rescue EncodingError
        raise ArgumentError, "name must be valid UTF-8, got #{name.inspect} (#{name.encoding})"
      end
    end
  end
end
