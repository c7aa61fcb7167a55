# frozen_string_literal: true

module LeaseMachines
  # How a {Holder} paces itself: the TTL it asks for, how long after a
  # confirmation it renews, and how long before expiry it starts to worry.
  # Valid when `ttl > 0`, `renew_after > 0`, `warn_before < ttl` and
  # `renew_after <= ttl - warn_before`; otherwise ArgumentError. Frozen.
  class Cadence
    include ValueObject

    def initialize(ttl:, renew_after:, warn_before:)
      _init(ttl, renew_after, warn_before)
      freeze
    end

    def to_h
      { ttl: ttl, renew_after: renew_after, warn_before: warn_before }
    end

    def deconstruct_keys(_keys)
      to_h
    end

    def ==(other)
      same_class?(other) && other.to_h == to_h
    end
    alias eql? ==

    def hash
      [self.class, ttl, renew_after, warn_before].hash
    end

    def inspect
      "#<#{self.class.name} ttl=#{ttl} renew_after=#{renew_after} warn_before=#{warn_before}>"
    end
    alias to_s inspect
  end
end
