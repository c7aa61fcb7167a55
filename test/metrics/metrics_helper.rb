# frozen_string_literal: true

require "test_helper"
require "lease_machines/testing"
require "lease_machines/metrics"
require_relative "../support/prometheus_text"

module LeaseMachines
  # What the metrics tests share: a registry installed for the test (and
  # uninstalled after it), read back through its Prometheus text.
  module MetricsHelper
    def setup
      super
      @clock = Testing::Clock.new(start: 1_000)
      @metrics = Metrics.new(clock: @clock).install
    end

    def teardown
      @metrics.uninstall
      super
    end

    # @return [PrometheusText] the registry's exposition, parsed back
    def exposition(metrics = @metrics)
      PrometheusText.new(metrics.to_prometheus)
    end

    # [count, sum] of a histogram series in the exposition
    def observed(name, **labels)
      text = exposition
      [text.value("#{name}_count", **labels), text.value("#{name}_sum", **labels)]
    end
  end
end
