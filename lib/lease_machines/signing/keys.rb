# frozen_string_literal: true

module LeaseMachines
  # Signed tokens (docs/FENCES.md, "Signed tokens").
  module Signing
    # A frozen list of secret keys: the first signs, every one verifies. The
    # bytes live in native memory only, never shown.
    class Keys
      def self.from(keys, name = "signing_keys") = nil.equal?(keys) ? nil : new(Native::ProofKeys.build(keys, name))

      MIN_BYTES = 32

      def initialize(native)
        @native = native
        freeze
      end

      def size = @native.size

      def sign(resource, token, owner) = @native.sign(resource, token, owner)

      def verify(resource, token, owner, proof) = @native.verify(resource, token, owner, proof)

      def signed(resource, decision)
        lease = decision.lease
        return decision unless lease

        proven = Lease.exact(owner: lease.owner, token: lease.token, expires_at_ns: lease.expires_at_ns,
                             proof: sign(resource, lease.token, lease.owner))
        Decision.new(status: decision.status, lease: proven)
      end

      def inspect = "#<#{self.class.name} (#{size} #{size == 1 ? 'key' : 'keys'}, not shown)>"
      alias to_s inspect
    end
  end
end
