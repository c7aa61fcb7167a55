# frozen_string_literal: true

require "lease_machines/stores/resource_name"

module LeaseMachines
  module Fences
    # The one place a fence reads a token argument: an Integer in
    # 0..2**64-1, nothing converted (as `Fence#accept`), or a lease.
    module Token
      MAX = (2**64) - 1
      RANGE = "0..#{MAX}".freeze

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

        # A guard's token and proof: a Lease gives both.
        # @return [Array(Integer, String)] the token and the proof (or nil)
        # @raise [TypeError] for a proof that is not a String
        # @raise [ArgumentError] for a Lease with a proof beside it
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

        # A guard's owner: the lease's when `value` is a Lease, else `owner`
        # (nil: a bare token, no owner recorded or compared).
        # @return [Integer, nil]
        # @raise [ArgumentError] for a Lease with an owner beside it
        def owner(value, owner)
          return nil.equal?(owner) ? nil : check(owner, "owner") unless Lease === value # rubocop:disable Style/CaseEquality
          return value.owner if nil.equal?(owner)

          raise ArgumentError, "owner: is read from the lease: pass the lease alone, or its token with owner:"
        end

        # Raises ForgedTokenError unless one of `keys` ({Signing::Keys}) made
        # `proof` for the grant of `token` of `resource` to `owner`.
        # @raise [ArgumentError] for a proof without its owner (a bare token
        #   given `proof:` and no `owner:`): the proof signs the owner
        def authenticate(keys, resource, token, owner, proof)
          if nil.equal?(owner) && !nil.equal?(proof)
            raise ArgumentError, "a signed token needs the owner its proof signs: pass the lease, or owner: with proof:"
          end

          problem = nil.equal?(proof) ? :missing : keys.verify(resource, token, owner, proof)
          return if problem == :valid

          raise Refusals.report(ForgedTokenError.new(resource: resource, token: token, proof: proof, problem: problem))
        end

        # As {Stores.described}: `"1" (String)`.
        def describe(value)
          Stores.described(value)
        end
      end
    end
  end
end
