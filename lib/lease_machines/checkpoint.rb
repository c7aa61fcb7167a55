# frozen_string_literal: true

module LeaseMachines
  # An authority's whole state: the greatest token ever issued, the current
  # lease record (possibly expired) and the latest observed instant. Store it
  # before anyone acts on a decision; {Authority.restore} continues the history.
  #
  # A frozen value object made by the extension (`last_issued`, `lease`,
  # `observed_ns`, `observed` are native readers). `observed_ns` is exact;
  # `observed` is Float seconds. A Checkpoint is consistent by construction:
  # there is no way to make one whose lease token was never issued.
  class Checkpoint
    include ValueObject

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

    private_class_method :_new, :_exact

    # Marshal: the exact fields as decimal text ("-" for nil), rebuilt (and
    # checked) by {exact}.
    def _dump(_level)
      [last_issued || "-", observed_ns, lease ? lease._dump(0) : "- - -"].join(" ")
    end

    def self._load(text)
      last_issued, observed_ns, owner, token, expires_at_ns = ValueObject.integers(text, 5)
      lease = Lease.exact(owner: owner, token: token, expires_at_ns: expires_at_ns) if token
      exact(last_issued: last_issued, lease: lease, observed_ns: observed_ns)
    end

    def to_h
      { last_issued: last_issued, lease: lease&.to_h, observed: observed }
    end

    def deconstruct_keys(_keys)
      { last_issued: last_issued, lease: lease, observed: observed }
    end

    def ==(other)
      same_class?(other) && other.last_issued == last_issued && other.lease == lease &&
        other.observed_ns == observed_ns
    end
    alias eql? ==

    def hash
      [self.class, last_issued, lease, observed_ns].hash
    end

    def inspect
      "#<#{self.class.name} last_issued=#{last_issued.inspect} lease=#{lease.inspect} observed=#{observed}>"
    end
    alias to_s inspect
  end
end
