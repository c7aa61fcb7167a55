# frozen_string_literal: true

require "lease_machines"

module LeaseMachines
  # Counters and histograms of the lease events (docs/RUNTIME.md#metrics), in the Prometheus text format.
  class Metrics
    HANDLERS = { acquire: :acquired, renew: :renewed, release: :released, at_risk: :at_risk, lost: :lost,
                 fenced: :fenced, fence_refused: :fence_refused, elected: :elected, deposed: :deposed }.freeze
    STORE_CALLS = { acquire: :acquire, renew: :renew, release: :release }.freeze

    def initialize(family: Families::DEFAULT, max_families: 50, clock: Runtime::MonotonicClock)
      raise TypeError, "clock must respond to #now, got #{clock.inspect}" unless clock.respond_to?(:now)

      @families = family == false ? nil : Families.new(family, max_families)
      @clock = clock
      @handovers = Handovers.new
      @series = Catalog::METRICS.transform_values { |metric| metric.type == :counter ? Hash.new(0) : {} }
      @mutex = Mutex.new
    end

    def install
      @mutex.synchronize do
        LeaseMachines.subscribe(self) unless @installed
        @installed = true
      end
      self
    end

    def uninstall
      @mutex.synchronize do
        installed = @installed
        @installed = false
        installed ? LeaseMachines.unsubscribe(self) : false
      end
    end

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

    def to_prometheus = Exposition.text(snapshot)

    def value(name, **labels)
      id = Catalog.id(name)
      wanted = labels.to_h { |key, label| [key.to_s, label.to_s] }
      found = Exposition.labelled(id, snapshot.fetch(id)).find { |series_labels, _| series_labels.to_h == wanted }
      return found.last if found

      Catalog::METRICS.fetch(id).type == :counter ? 0 : nil
    end

    private

    def snapshot
      @mutex.synchronize do
        @series.transform_values { |series| series.transform_values { |value| value.is_a?(Histogram) ? value.dup : value } }
      end
    end

    def count(id, key) = @series.fetch(id)[key] += 1

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

    def lost(payload, family, _now)
      count(:lost, [family, payload[:reason]])
      observe(:held, [family], payload[:held])
    end

    def at_risk(_payload, family, _now) = count(:at_risk, [family])
    def fenced(_payload, family, _now) = count(:fenced_holds, [family])
    def fence_refused(payload, family, _now) = count(:fence_refusals, [family, payload[:reason]])
    def elected(_payload, family, _now) = count(:elections, [family])
    def deposed(_payload, family, _now) = count(:depositions, [family])
  end
end

require_relative "metrics/catalog"
require_relative "metrics/histogram"
require_relative "metrics/families"
require_relative "metrics/handovers"
require_relative "metrics/exposition"
require_relative "metrics/rack_app"
