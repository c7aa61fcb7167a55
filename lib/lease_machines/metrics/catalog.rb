# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # Every metric the registry keeps: its name, Prometheus type, help text
    # and, for a histogram, its fixed buckets (upper bounds in seconds).
    # docs/RUNTIME.md#metrics lists them with the events that feed them.
    module Catalog
      # One metric's definition.
      Metric = Struct.new(:name, :type, :help, :buckets, keyword_init: true)

      # How late renewals were sent against their plan: scheduler delay.
      LATENESS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0].freeze
      # A store call's own duration.
      STORE_CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0].freeze
      # Waiting for a resource: a handover, an acquire that waited.
      WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0].freeze
      # How long a lease was held: from a second to a day.
      HELD_BUCKETS = [0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 21_600.0, 86_400.0].freeze

      METRICS = [
        Metric.new(name: "lease_machines_grants_total", type: :counter,
                   help: "Acquires granted (hold's first try or a later one)"),
        Metric.new(name: "lease_machines_refusals_total", type: :counter,
                   help: "Acquires refused by the authority, by reason (occupied, ...)"),
        Metric.new(name: "lease_machines_acquire_errors_total", type: :counter,
                   help: "Acquires that failed in the store (store_error, outcome_unknown)"),
        Metric.new(name: "lease_machines_acquire_wait_seconds", type: :histogram, buckets: WAIT_BUCKETS,
                   help: "Seconds a granted hold waited since its first attempt (0 when granted at once)"),
        Metric.new(name: "lease_machines_handover_seconds", type: :histogram, buckets: WAIT_BUCKETS,
                   help: "Seconds from a release to the next grant of that resource, seen in this process"),
        Metric.new(name: "lease_machines_renewals_total", type: :counter,
                   help: "Renewals, by status (renewed, rejected, failed) and reason"),
        Metric.new(name: "lease_machines_renewal_lateness_seconds", type: :histogram, buckets: LATENESS_BUCKETS,
                   help: "Seconds a renewal was sent after its plan"),
        Metric.new(name: "lease_machines_releases_total", type: :counter,
                   help: "Releases, by status (released, rejected, failed) and reason"),
        Metric.new(name: "lease_machines_at_risk_total", type: :counter,
                   help: "Holds that passed their warning deadline unconfirmed"),
        Metric.new(name: "lease_machines_lost_total", type: :counter, help: "Holds lost, by reason"),
        Metric.new(name: "lease_machines_fenced_holds_total", type: :counter,
                   help: "Holds whose own token a fence refused (the holder's side)"),
        Metric.new(name: "lease_machines_fence_refusals_total", type: :counter,
                   help: "Writes a fence refused, by reason (stale: a newer token wrote first)"),
        Metric.new(name: "lease_machines_held_seconds", type: :histogram, buckets: HELD_BUCKETS,
                   help: "Seconds from a grant to its release or loss"),
        Metric.new(name: "lease_machines_store_call_seconds", type: :histogram, buckets: STORE_CALL_BUCKETS,
                   help: "Seconds each acquire, renew and release call to the store took"),
        Metric.new(name: "lease_machines_elections_total", type: :counter, help: "Elector terms begun"),
        Metric.new(name: "lease_machines_depositions_total", type: :counter, help: "Elector terms ended")
      ].to_h { |metric| [metric.name, metric.freeze] }.freeze

      # @return [Metric]
      # @raise [KeyError] for a name not in the catalog
      def self.fetch(name)
        METRICS.fetch(name)
      end
    end
  end
end
