# frozen_string_literal: true

require_relative "metrics_helper"

module LeaseMachines
  # The exposition, read back line by line: HELP and TYPE for every metric,
  # label values escaped, histograms cumulative.
  class PrometheusTextTest < Minitest::Test
    include MetricsHelper

    def hold(store, name, &)
      store.authority(name).hold(owner: 7, ttl: 30, clock: @clock, &)
    end

    def test_every_metric_has_its_help_and_type_even_before_any_event
      text = exposition
      assert_equal Metrics::Catalog::METRICS.values.map(&:name), text.types.keys
      Metrics::Catalog::METRICS.each_value do |metric|
        assert_equal metric.type, text.types.fetch(metric.name), metric.name
        assert_equal metric.help, text.help.fetch(metric.name)
      end
      assert_empty text.samples
      assert(@metrics.to_prometheus.lines.all? { |line| line.start_with?("# HELP ", "# TYPE ") })
    end

    def test_label_values_escape_quotes_backslashes_and_line_feeds
      hostile = "a\"b\\c\nd"
      metrics = Metrics.new(family: ->(_resource) { hostile }).install
      hold(Stores::Memory.new(clock: @clock), "nightly") { :ok }

      raw = metrics.to_prometheus
      assert_includes raw, "lease_machines_grants_total{family=\"a\\\"b\\\\c\\nd\"} 1\n"
      assert_equal [{ "family" => hostile }], PrometheusText.new(raw).find("lease_machines_grants_total").map(&:labels)
    ensure
      metrics&.uninstall
    end

    def test_help_text_escapes_backslashes_and_line_feeds
      assert_equal "a\\\\b\\nc \"quoted\"", Metrics::Exposition.escape_help("a\\b\nc \"quoted\"")
    end

    def test_histograms_are_cumulative_with_inf_sum_and_count
      store = Stores::Memory.new(clock: @clock)
      [0.5, 3.0, 4000.0].each do |seconds|
        hold(store, "reports/nightly") { @clock.advance(seconds, settle: false) }
      end

      text = exposition
      buckets = text.find("lease_machines_held_seconds_bucket", family: "reports")
      bounds = buckets.map { |sample| PrometheusText.number(sample.labels.fetch("le")) }
      assert_equal Metrics::Catalog::HELD_BUCKETS + [Float::INFINITY], bounds
      counts = buckets.map(&:value)
      assert_equal counts.sort, counts, "cumulative"
      assert_equal [0, 0, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3], counts.map(&:to_i)
      assert_equal 3.0, text.value("lease_machines_held_seconds_count", family: "reports")
      assert_in_delta 4003.5, text.value("lease_machines_held_seconds_sum", family: "reports")
    end

    def test_series_are_sorted_and_the_text_ends_with_a_line_feed
      store = Stores::Memory.new(clock: @clock)
      %w[zeta/1 alpha/1].each { |name| hold(store, name) { :ok } }
      raw = @metrics.to_prometheus
      assert raw.end_with?("\n")
      refute_includes raw, "\n\n"
      families = PrometheusText.new(raw).find("lease_machines_grants_total").map { |sample| sample.labels["family"] }
      assert_equal %w[alpha zeta], families
    end
  end
end
