# frozen_string_literal: true

require_relative "../errors"
require "lease_machines/stores/resource_name"

module LeaseMachines
  module Fences
    # The one place a fence reads a token argument: an Integer in 0..2**64-1,
    # nothing converted (as `Fence#accept`), or a lease.
    module Token
      MAX = (2**64) - 1
      RANGE = "0..#{MAX}".freeze

      class << self
        # @raise [TypeError] for anything but an Integer; [RangeError] outside 0..2**64-1
        def check(value, name = "token")
          # Integer === value asks the class: an object that claims to be an Integer is not one.
          unless Integer === value # rubocop:disable Style/CaseEquality
            raise TypeError, "#{name} must be an Integer in #{RANGE}, got #{describe(value)}"
          end
          raise RangeError, "#{name} must be an Integer in #{RANGE}, got #{value}" if value.negative? || value > MAX

          value
        end

        # A guard's token and proof (a Lease gives both).
        def presented(value, proof)
          if Lease === value # rubocop:disable Style/CaseEquality -- asks the class, not the object
            unless nil.equal?(proof)
              raise ArgumentError, "proof: is read from the lease: pass the lease alone, or its token with proof:"
            end

            return [value.token, value.proof]
          end
          unless nil.equal?(proof) || String === proof # rubocop:disable Style/CaseEquality
            raise TypeError, "proof must be nil or a String (Lease#proof, 64 lowercase hex digits), got #{describe(proof)}"
          end

          [check(value), proof]
        end

        # A guard's owner: the lease's, else `owner` (nil: none recorded or compared).
        def owner(value, owner)
          return nil.equal?(owner) ? nil : check(owner, "owner") unless Lease === value # rubocop:disable Style/CaseEquality
          return value.owner if nil.equal?(owner)

          raise ArgumentError, "owner: is read from the lease: pass the lease alone, or its token with owner:"
        end

        # Raises ForgedTokenError unless one of `keys` made `proof` for this grant.
        def authenticate(keys, resource, token, owner, proof)
          if nil.equal?(owner) && !nil.equal?(proof)
            raise ArgumentError, "a signed token needs the owner its proof signs: pass the lease, or owner: with proof:"
          end

          problem = nil.equal?(proof) ? :missing : keys.verify(resource, token, owner, proof)
          return if problem == :valid

          raise Refusals.report(ForgedTokenError.new(resource: resource, token: token, proof: proof, problem: problem))
        end

        def describe(value) = Stores.described(value)
      end
    end

    # A token as a column holds it. SQLite has no unsigned 64-bit type (2**63 and up
    # become a lossy REAL), so a token is TEXT of exactly 20 zero-padded digits: memcmp
    # orders equal-length strings as the numbers they spell, and numeric reads the same text.
    module StoredToken
      DIGITS = /\A[0-9]{1,20}\z/
      private_constant :DIGITS

      class << self
        def text(token) = format("%020d", token)

        # Decimal text, an Integer or an integral BigDecimal in 0..2**64-1 (nil stays nil).
        # @raise [StoreError] for anything else: a value written by hand is not guessed at
        def read(value, where)
          case value
          when nil then nil
          when Integer then in_range(value, value, where)
          when String
            raise not_a_token(value, where) unless value.match?(DIGITS)

            in_range(Integer(value, 10), value, where)
          else
            integral = defined?(BigDecimal) && value.is_a?(BigDecimal) && value.finite? && value.frac.zero?
            raise not_a_token(value, where) unless integral

            in_range(value.to_i, value, where)
          end
        end

        private

        def in_range(integer, value, where)
          raise not_a_token(value, where) unless integer.between?(0, Token::MAX)

          integer
        end

        def not_a_token(value, where)
          StoreError.new("#{where} holds #{value.inspect}, which is not a token (an Integer in #{Token::RANGE})")
        end
      end
    end

    # What a fenced row write of a bound or signed model shows: the lease's resource
    # name, token, owner and proof. A frozen value, checked when made.
    class Pass
      attr_reader :resource, :token, :proof, :owner

      # @param lease [Lease, Integer] the lease, or its token (then `proof:` and `owner:`)
      def initialize(resource, lease, proof: nil, owner: nil)
        @resource = Stores.resource_name(resource, argument: "resource")
        @owner = Token.owner(lease, owner)
        @token, @proof = Token.presented(lease, proof)
        freeze
      end

      def ==(other) = other.instance_of?(Pass) && fields == [other.resource, other.token, other.owner, other.proof]
      alias eql? ==

      def hash = [Pass, *fields].hash

      def inspect
        "#<#{self.class.name} resource=#{@resource.inspect} token=#{@token}#{" owner=#{@owner}" if @owner}" \
          "#{" proof=#{@proof.inspect}" if @proof}>"
      end
      alias to_s inspect

      private

      def fields = [@resource, @token, @owner, @proof]
    end
  end
end
