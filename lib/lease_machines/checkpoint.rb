# frozen_string_literal: true

module LeaseMachines
  # An authority's whole state: the greatest token issued, the lease record
  # and the latest observed instant. Store it before anyone acts on a
  # decision. A frozen value made by the extension, consistent by construction.
  class Checkpoint
    include ValueObject

    value_fields identity: %i[last_issued lease observed_ns], shown: %i[last_issued lease observed]

    # Rebuilds a checkpoint from stored parts (one row per resource). Raises
    # ArgumentError when the parts cannot come from one history: a lease with no
    # token issued, or a lease whose token is greater than `last_issued`.
    # @param observed [Integer, Float] seconds
    def self.new(last_issued:, lease:, observed:)
      _new(last_issued, lease, observed)
    end

    class << self
      alias from_parts new
    end

    # {from_parts} with the observed instant in exact nanoseconds, as a store keeps it.
    def self.exact(last_issued:, lease:, observed_ns:)
      _exact(last_issued, lease, observed_ns)
    end

    private_class_method :_new, :_exact, :_flat

    # Marshal: "last_issued observed_ns owner token expires_at_ns" ("-" for
    # nil), checked on load as {exact} checks its parts.
    def _dump(_level)
      [last_issued || "-", observed_ns, lease ? lease._dump(0) : "- - -"].join(" ")
    end

    def self._load(text)
      last_issued, observed_ns, owner, token, expires_at_ns = ValueObject.integers(text, 5)
      _flat(last_issued, owner, token, expires_at_ns, observed_ns)
    end
  end
end
