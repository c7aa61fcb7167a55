# frozen_string_literal: true

module LeaseMachines
  # How a {Holder} paces itself: the TTL it asks for, how long after a
  # confirmation it renews, and how long before expiry it starts to worry.
  # Valid when `ttl > 0`, `renew_after > 0`, `warn_before < ttl` and
  # `renew_after <= ttl - warn_before`; otherwise ArgumentError. `max_hold`
  # (nil: none) ends the renewals that long after the grant; at least `ttl`.
  # Frozen.
  class Cadence
    include ValueObject

    value_fields identity: %i[ttl renew_after warn_before max_hold]

    def initialize(ttl:, renew_after:, warn_before:, max_hold: nil)
      _init(ttl, renew_after, warn_before, max_hold)
      freeze
    end
  end
end
