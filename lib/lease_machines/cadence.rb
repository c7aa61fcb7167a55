# frozen_string_literal: true

module LeaseMachines
  # How a {Holder} paces itself: the TTL, when to renew, when to worry, when renewals end (`max_hold`).
  class Cadence
    include ValueObject

    value_fields identity: %i[ttl renew_after warn_before max_hold]

    def initialize(ttl:, renew_after:, warn_before:, max_hold: nil)
      _init(ttl, renew_after, warn_before, max_hold)
      freeze
    end
  end
end
