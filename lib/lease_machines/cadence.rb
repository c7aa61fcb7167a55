# frozen_string_literal: true

module LeaseMachines
  # How a {Holder} paces itself: the TTL it asks for, how long after a
  # confirmation it renews, and how long before expiry it starts to worry.
  # Valid when `ttl > 0`, `renew_after > 0`, `warn_before < ttl` and
  # `renew_after <= ttl - warn_before`; otherwise ArgumentError. Frozen.
  class Cadence
    include ValueObject

    value_fields identity: %i[ttl renew_after warn_before]

    def initialize(ttl:, renew_after:, warn_before:)
      _init(ttl, renew_after, warn_before)
      freeze
    end
  end
end
