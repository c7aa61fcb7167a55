# frozen_string_literal: true

require "lease_machines"

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
    # The events whose `duration:` is a store call's.
    STORE_CALLS = { acquire: :acquire, renew: :renew, release: :release }.freeze

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
      # { metric id => { [family, label values...] => Integer or Histogram } }
      @series = Catalog::METRICS.transform_values { {} }
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
        family = @families&.of(payload[:resource])
        send(handler, payload, family, now)
        event = STORE_CALLS[name]
        observe(:store_call, [family, event], payload[:duration]) if event
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
      id = Catalog.id(name)
      wanted = labels.to_h { |key, label| [key.to_s, label.to_s] }
      found = Exposition.labelled(id, snapshot.fetch(id)).find { |series_labels, _| series_labels.to_h == wanted }
      if found
        found.last
      else
        (Catalog::METRICS.fetch(id).type == :counter ? 0 : nil)
      end
    end

    private

    # @return [Hash] a copy of every series, taken under the Mutex
    def snapshot
      @mutex.synchronize do
        @series.transform_values { |series| series.transform_values { |value| value.is_a?(Histogram) ? value.dup : value } }
      end
    end

    def count(id, key)
      series = @series.fetch(id)
      series[key] = series.fetch(key, 0) + 1
    end

    def observe(id, key, seconds)
      return unless seconds.is_a?(Numeric) && seconds.finite?

      series = @series.fetch(id)
      (series[key] ||= Histogram.new(Catalog::METRICS.fetch(id).buckets)).observe(seconds.negative? ? 0.0 : seconds)
    end

    def acquired(payload, family, now)
      case payload[:status]
      when :granted
        count(:grants, [family])
        observe(:acquire_wait, [family], payload[:waited])
        observe(:handover, [family], @handovers.granted(payload[:resource], now))
      when :rejected then count(:refusals, [family, payload[:reason]])
      else count(:acquire_errors, [family, payload[:reason]])
      end
    end

    def renewed(payload, family, _now)
      count(:renewals, [family, payload[:status], payload[:reason]])
      observe(:renewal_lateness, [family], payload[:late])
    end

    def released(payload, family, now)
      count(:releases, [family, payload[:status], payload[:reason]])
      @handovers.released(payload[:resource], now) if payload[:status] == :released
      observe(:held, [family], payload[:held])
    end

    def at_risk(_payload, family, _now)
      count(:at_risk, [family])
    end

    def lost(payload, family, _now)
      count(:lost, [family, payload[:reason]])
      observe(:held, [family], payload[:held])
    end

    def fenced(_payload, family, _now)
      count(:fenced_holds, [family])
    end

    def fence_refused(payload, family, _now)
      count(:fence_refusals, [family, payload[:reason]])
    end

    def elected(_payload, family, _now)
      count(:elections, [family])
    end

    def deposed(_payload, family, _now)
      count(:depositions, [family])
    end
  end
end

require_relative "metrics/catalog"
require_relative "metrics/histogram"
require_relative "metrics/families"
require_relative "metrics/handovers"
require_relative "metrics/exposition"
require_relative "metrics/rack_app"
