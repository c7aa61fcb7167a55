# frozen_string_literal: true

require_relative "../errors"
require_relative "token"

module LeaseMachines
  module Fences
    # A token as a database column holds it. SQLite has no unsigned 64-bit
    # type (2**63 and up become a lossy REAL), so a token is TEXT of exactly
    # 20 zero-padded digits: memcmp orders equal-length strings as the
    # numbers they spell, and PostgreSQL's numeric reads the same text.
    module StoredToken
      WIDTH = 20
      DIGITS = /\A[0-9]{1,20}\z/
      private_constant :DIGITS

      class << self
        # @param token [Integer] a checked token (0..2**64-1)
        # @return [String] its 20-digit text
        def text(token)
          format("%020d", token)
        end

        # Reads a stored token: decimal text, an Integer, or an integral
        # BigDecimal (ActiveRecord's numeric), in 0..2**64-1.
        # @param where [String] what holds the value, for the error message
        # @return [Integer, nil]
        # @raise [StoreError] for anything else: a value written by hand that
        #   is not a token (the fence does not guess)
        def read(value, where)
          case value
          when nil then nil
          when Integer then in_range(value, value, where)
          when String then from_text(value, where)
          else from_decimal(value, where)
          end
        end

        private

        def from_text(value, where)
          raise not_a_token(value, where) unless value.match?(DIGITS)

          in_range(Integer(value, 10), value, where)
        end

        def from_decimal(value, where)
          raise not_a_token(value, where) unless defined?(BigDecimal) && value.is_a?(BigDecimal) && value.finite? &&
                                                 value.frac.zero?

          in_range(value.to_i, value, where)
        end

        def in_range(integer, value, where)
          raise not_a_token(value, where) unless integer.between?(0, Token::MAX)

          integer
        end

        def not_a_token(value, where)
          StoreError.new("#{where} holds #{value.inspect}, which is not a token (an Integer in #{Token::RANGE})")
        end
      end
    end
  end
end
