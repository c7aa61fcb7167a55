# frozen_string_literal: true

module LeaseMachines
  # Signed tokens (docs/FENCES.md, "Signed tokens").
  module Signing
    # A frozen list of secret keys: the first signs, every one verifies. The
    # bytes live in native memory only, never shown.
    class Keys
      # `signing_keys`, as a store or a fence takes it. A refusal never shows a key's content.
      # @return [Keys, nil]
      # @raise [TypeError] for a non-Array, or an element that is not a String
      # @raise [ArgumentError] for an empty Array, or a key shorter than 32 bytes
      def self.from(keys, name = "signing_keys")
        nil.equal?(keys) ? nil : new(Native::ProofKeys.build(keys, name))
      end

      # The shortest key, in bytes (the core's ProofKey::MIN_LEN).
      MIN_BYTES = 32

      def initialize(native)
        @native = native
        freeze
      end

      # @return [Integer] how many keys the list holds
      def size
        @native.size
      end

      # @return [String] the first key's proof of the grant of `token` for
      #   `resource` to `owner` (the v2 form, docs/FENCES.md): 64 lowercase
      #   hex digits
      def sign(resource, token, owner)
        @native.sign(resource, token, owner)
      end

      # @return [Symbol] :valid when one of the keys made `proof` for
      #   `resource`, `token` and `owner` (compared in constant time),
      #   :forged when none did (a proof of the v1 form too), :malformed
      #   when `proof` is not 64 lowercase hex digits
      def verify(resource, token, owner, proof)
        @native.verify(resource, token, owner, proof)
      end

      # `decision`, its lease carrying the proof of its token for `resource`
      # (a decision without a lease, as it is).
      # @return [Decision]
      def signed(resource, decision)
        lease = decision.lease
        return decision unless lease

        proven = Lease.exact(owner: lease.owner, token: lease.token, expires_at_ns: lease.expires_at_ns,
                             proof: sign(resource, lease.token, lease.owner))
        Decision.new(status: decision.status, lease: proven)
      end

      def inspect
        "#<#{self.class.name} (#{size} #{size == 1 ? 'key' : 'keys'}, not shown)>"
      end
      alias to_s inspect
    end
  end
end
