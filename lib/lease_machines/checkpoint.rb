# frozen_string_literal: true

module LeaseMachines
  # An authority's whole state: the greatest token issued, the lease record, the latest observed instant.
  class Checkpoint
    include ValueObject

    value_fields identity: %i[last_issued lease observed_ns], shown: %i[last_issued lease observed]

    def self.new(last_issued:, lease:, observed:) = _new(last_issued, lease, observed)

    singleton_class.alias_method :from_parts, :new

    def self.exact(last_issued:, lease:, observed_ns:) = _exact(last_issued, lease, observed_ns)

    private_class_method :_new, :_exact, :_flat

    def _dump(_level) = [last_issued || "-", observed_ns, lease ? lease._dump(0) : "- - -"].join(" ")

    def self._load(text)
      last_issued, observed_ns, owner, token, expires_at_ns = ValueObject.integers(text, 5)
      _flat(last_issued, owner, token, expires_at_ns, observed_ns)
    end
  end
end
