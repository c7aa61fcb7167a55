# frozen_string_literal: true

require_relative "metrics_helper"
require "rack"
require "rack/mock"
require "rack/lint"

module LeaseMachines
  # Metrics::RackApp through Rack::MockRequest, checked by Rack::Lint.
  class RackAppTest < Minitest::Test
    include MetricsHelper

    def setup
      super
      @app = Rack::MockRequest.new(Rack::Lint.new(Metrics::RackApp.new(@metrics)))
    end

    def test_get_serves_the_prometheus_text
      Stores::Memory.new(clock: @clock).authority("reports/nightly").hold(owner: 7, ttl: 30, clock: @clock) { :ok }
      response = @app.get("/metrics")
      assert_equal 200, response.status
      assert_equal "text/plain; version=0.0.4; charset=utf-8", response.headers["content-type"]
      assert_equal @metrics.to_prometheus, response.body
      assert_equal response.body.bytesize.to_s, response.headers["content-length"]
      assert_equal 1.0, PrometheusText.new(response.body).value("lease_machines_grants_total", family: "reports")
    end

    def test_head_has_no_body_and_other_methods_are_refused
      head = @app.request("HEAD", "/metrics")
      assert_equal ["", 200], [head.body, head.status]
      response = @app.post("/metrics")
      assert_equal 405, response.status
      assert_equal "GET, HEAD", response.headers["allow"]
    end

    def test_it_serves_a_registry_only
      skip "ill-typed on purpose: the signatures refuse this call" if defined?(::RBS::Test::Tester)

      error = assert_raises(TypeError) { Metrics::RackApp.new(Object.new) }
      assert_match(/metrics must be a LeaseMachines::Metrics/, error.message)
    end
  end
end
