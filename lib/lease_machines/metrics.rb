# frozen_string_literal: true

require "lease_machines"
require_relative "metrics/catalog"
require_relative "metrics/histogram"
require_relative "metrics/families"
require_relative "metrics/handovers"
require_relative "metrics/exposition"
require_relative "metrics/rack_app"

module LeaseMachines
  # Counters and histograms of the lease events (docs/RUNTIME.md#metrics),
  # kept in this process and shown in the Prometheus text format:
  #
  #   metrics = LeaseMachines::Metrics.new.install
  #   metrics.to_prometheus # => "# HELP lease_machines_grants_total ..."
  #
  # It is an ordinary subscriber ({LeaseMachines.subscribe}): until one is
  # installed, the runtime builds no payload for it. Thread-safe (one Mutex
  # per registry) and bounded: series are labelled by metric, status, reason
  # and resource *family* ({Families}), never by the full resource name, and
  # the handover memory is capped ({Handovers}).
  class Metrics
    # The method each event goes to.
    HANDLERS = { acquire: :acquired, renew: :renewed, release: :released, at_risk: :at_risk, lost: :lost,
                 fenced: :fenced, fence_refused: :fence_refused, elected: :elected, deposed: :deposed }.freeze

    # @param family [#call, false] resource name -> its `family` label
    #   ({Families::DEFAULT}: the name up to its first "/", ":" or space);
    #   false: no family label at all
    # @param max_families [Integer] distinct families kept; more are "other"
    # @param clock [#now] seconds, for handovers (monotonic by default)
    def initialize(family: Families::DEFAULT, max_families: 50, clock: Runtime::MonotonicClock)
      raise TypeError, "clock must respond to #now, got #{clock.inspect}" unless clock.respond_to?(:now)

      @families = family == false ? nil : Families.new(family, max_families)
      @clock = clock
      @handovers = Handovers.new
      @series = Hash.new { |all, name| all[name] = {} }
      @mutex = Mutex.new
    end

    # Subscribes this registry to the lease events. @return [self]
    def install
      @mutex.synchronize do
        LeaseMachines.subscribe(self) unless @installed
        @installed = true
      end
      self
    end

    # @return [Boolean] whether it was installed
    def uninstall
      @mutex.synchronize do
        installed = @installed
        @installed = false
        installed ? LeaseMachines.unsubscribe(self) : false
      end
    end

    # The subscriber: counts one event. Events it does not know are ignored.
    def call(name, payload)
      handler = HANDLERS[name]
      return unless handler

      now = @clock.now
      @mutex.synchronize do
        labels = family_labels(payload[:resource])
        send(handler, payload, labels, now)
        store_call(name, payload, labels)
      end
      nil
    end

    # @return [String] every metric in the Prometheus text format 0.0.4
    def to_prometheus
      Exposition.text(snapshot)
    end

    # One series' current value: an Integer for a counter (0 when never
    # counted), a Histogram copy (nil when never observed).
    # `labels`: exactly the series' labels (`family: "reports", reason: "occupied"`).
    def value(name, **labels)
      metric = Catalog.fetch(name)
      wanted = labels.to_h { |key, label| [key.to_s, label.to_s] }
      found = snapshot.fetch(name, {}).find { |series_labels, _| series_labels.to_h == wanted }&.last
      found || (metric.type == :counter ? 0 : nil)
    end

    private

    # @return [Hash] a copy of every series, taken under the Mutex
    def snapshot
      @mutex.synchronize do
        @series.transform_values { |series| series.transform_values { |value| value.is_a?(Histogram) ? value.dup : value } }
      end
    end

    def family_labels(resource)
      @families ? [["family", @families.of(resource)].freeze] : []
    end

    def count(name, labels, **more)
      key = (labels + more.filter_map { |label, value| [label.to_s, value.to_s].freeze unless value.nil? }).freeze
      series = @series[name]
      series[key] = series.fetch(key, 0) + 1
    end

    def observe(name, labels, seconds)
      return unless seconds.is_a?(Numeric) && seconds.finite?

      (@series[name][labels.dup.freeze] ||= Histogram.new(Catalog.fetch(name).buckets)).observe([seconds, 0.0].max)
    end

    def store_call(name, payload, labels)
      return unless HANDLERS.slice(:acquire, :renew, :release).key?(name)

      observe("lease_machines_store_call_seconds", labels + [["event", name.to_s]], payload[:duration])
    end

    def acquired(payload, labels, now)
      case payload[:status]
      when :granted
        count("lease_machines_grants_total", labels)
        observe("lease_machines_acquire_wait_seconds", labels, payload[:waited])
        observe("lease_machines_handover_seconds", labels, @handovers.granted(payload[:resource], now))
      when :rejected then count("lease_machines_refusals_total", labels, reason: payload[:reason])
      else count("lease_machines_acquire_errors_total", labels, reason: payload[:reason])
      end
    end

    def renewed(payload, labels, _now)
      count("lease_machines_renewals_total", labels, status: payload[:status], reason: payload[:reason])
      observe("lease_machines_renewal_lateness_seconds", labels, payload[:late])
    end

    def released(payload, labels, now)
      count("lease_machines_releases_total", labels, status: payload[:status], reason: payload[:reason])
      @handovers.released(payload[:resource], now) if payload[:status] == :released
      observe("lease_machines_held_seconds", labels, payload[:held])
    end

    def at_risk(_payload, labels, _now)
      count("lease_machines_at_risk_total", labels)
    end

    def lost(payload, labels, _now)
      count("lease_machines_lost_total", labels, reason: payload[:reason])
      observe("lease_machines_held_seconds", labels, payload[:held])
    end

    def fenced(_payload, labels, _now)
      count("lease_machines_fenced_holds_total", labels)
    end

    def fence_refused(payload, labels, _now)
      count("lease_machines_fence_refusals_total", labels, reason: payload[:reason])
    end

    def elected(_payload, labels, _now)
      count("lease_machines_elections_total", labels)
    end

    def deposed(_payload, labels, _now)
      count("lease_machines_depositions_total", labels)
    end
  end
end
