# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # Every metric the registry keeps: name, type, help, fixed buckets.
    module Catalog
      Metric = Struct.new(:name, :type, :help, :labels, :buckets, keyword_init: true)

      LATENESS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0].freeze
      STORE_CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0].freeze
      WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0].freeze
      HELD_BUCKETS = [0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 21_600.0, 86_400.0].freeze

      METRICS = {
        grants: Metric.new(name: "lease_machines_grants_total", labels: [], type: :counter,
                           help: "Acquires granted (hold's first try or a later one)"),
        refusals: Metric.new(name: "lease_machines_refusals_total", labels: %w[reason], type: :counter,
                             help: "Acquires refused by the authority, by reason (occupied, ...)"),
        acquire_errors: Metric.new(name: "lease_machines_acquire_errors_total", labels: %w[reason], type: :counter,
                                   help: "Acquires that failed in the store (store_error, outcome_unknown)"),
        acquire_wait: Metric.new(name: "lease_machines_acquire_wait_seconds", labels: [], type: :histogram, buckets: WAIT_BUCKETS,
                                 help: "Seconds a granted hold waited since its first attempt (0 when granted at once)"),
        handover: Metric.new(name: "lease_machines_handover_seconds", labels: [], type: :histogram, buckets: WAIT_BUCKETS,
                             help: "Seconds from a release to the next grant of that resource, seen in this process"),
        renewals: Metric.new(name: "lease_machines_renewals_total", labels: %w[status reason], type: :counter,
                             help: "Renewals, by status (renewed, rejected, failed) and reason"),
        renewal_lateness: Metric.new(name: "lease_machines_renewal_lateness_seconds", labels: [], type: :histogram,
                                     buckets: LATENESS_BUCKETS,
                                     help: "Seconds a renewal was sent after its plan"),
        releases: Metric.new(name: "lease_machines_releases_total", labels: %w[status reason], type: :counter,
                             help: "Releases, by status (released, rejected, failed) and reason"),
        at_risk: Metric.new(name: "lease_machines_at_risk_total", labels: [], type: :counter,
                            help: "Holds that passed their warning deadline unconfirmed"),
        lost: Metric.new(name: "lease_machines_lost_total", labels: %w[reason], type: :counter, help: "Holds lost, by reason"),
        fenced_holds: Metric.new(name: "lease_machines_fenced_holds_total", labels: [], type: :counter,
                                 help: "Holds whose own token a fence refused (the holder's side)"),
        fence_refusals: Metric.new(name: "lease_machines_fence_refusals_total", labels: %w[reason], type: :counter,
                                   help: "Writes a fence refused, by reason (stale: a newer token wrote first)"),
        held: Metric.new(name: "lease_machines_held_seconds", labels: [], type: :histogram, buckets: HELD_BUCKETS,
                         help: "Seconds from a grant to its release or loss"),
        store_call: Metric.new(name: "lease_machines_store_call_seconds", labels: %w[event], type: :histogram,
                               buckets: STORE_CALL_BUCKETS,
                               help: "Seconds each acquire, renew and release call to the store took"),
        elections: Metric.new(name: "lease_machines_elections_total", labels: [], type: :counter, help: "Elector terms begun"),
        depositions: Metric.new(name: "lease_machines_depositions_total", labels: [], type: :counter, help: "Elector terms ended")
      }.transform_values(&:freeze).freeze

      IDS = METRICS.to_h { |id, metric| [metric.name, id] }.freeze

      def self.id(name) = IDS.fetch(name)
    end
  end
end
