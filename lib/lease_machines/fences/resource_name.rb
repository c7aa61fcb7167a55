# frozen_string_literal: true

module LeaseMachines
  module Fences
    # What a fenced resource may be called: the stores' rule for resource
    # names (1 to 255 bytes of valid UTF-8 without NUL, compared byte for
    # byte), so that one name can be a lease's and its fence's. The messages
    # name the fence's argument, `resource`.
    module ResourceName
      MAX_BYTES = 255

      class << self
        # @return [String] the name, frozen UTF-8
        # @raise [TypeError] for a non-String
        # @raise [ArgumentError] for an empty, too long, NUL-carrying or
        #   invalid UTF-8 String
        def check(name)
          unless String === name # rubocop:disable Style/CaseEquality -- asks the class, not the object
            raise TypeError, "resource must be a String (the resource name), got #{Token.describe(name)}"
          end

          utf8 = utf8(name)
          raise ArgumentError, "resource must not be empty, got #{name.inspect}" if utf8.empty?

          if utf8.bytesize > MAX_BYTES
            raise ArgumentError, "resource must be at most #{MAX_BYTES} bytes, got #{utf8.bytesize} bytes: " \
                                 "#{utf8[0, 40].inspect}..."
          end
          raise ArgumentError, "resource must not contain NUL bytes, got #{name.inspect}" if utf8.include?("\0")

          -utf8
        end

        private

        def utf8(name)
          utf8 = name.encode(Encoding::UTF_8)
          return utf8 if utf8.valid_encoding?

          raise ArgumentError, "resource must be valid UTF-8, got #{name.inspect}"
        rescue EncodingError
          raise ArgumentError, "resource must be valid UTF-8, got #{name.inspect} (#{name.encoding})"
        end
      end
    end
  end
end
