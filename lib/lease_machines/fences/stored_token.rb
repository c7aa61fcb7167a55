# frozen_string_literal: true

require_relative "../errors"
require_relative "token"

module LeaseMachines
  module Fences
    # A token as a database column holds it, where SQL compares it.
    #
    # PostgreSQL: numeric(20,0), exact over 0..2**64-1 and compared as a
    # number.
    #
    # SQLite has no unsigned 64-bit type: an INTEGER is signed (2**63 and up
    # do not fit, and SQLite silently turns them into a lossy REAL), and
    # decimal text compares "10" < "9". A token is kept there as TEXT of
    # exactly 20 decimal digits, zero-padded ("00000000000000000042"): for
    # strings of equal length SQLite's BINARY collation (memcmp) orders them
    # as the numbers they spell, so `highest <= ?` in SQL is the comparison of
    # the tokens, exact over the whole range, and the value stays readable in
    # the sqlite3 shell. The padded text is valid numeric input for
    # PostgreSQL too (and compares correctly in a text column there), so one
    # encoding serves every column a fence compares.
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

        # Reads a stored token: the padded or plain decimal text (SQLite, or
        # PostgreSQL's text form of numeric), an Integer, or an integral
        # BigDecimal (ActiveRecord's decoding of numeric), in 0..2**64-1.
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
