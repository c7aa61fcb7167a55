# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # A Rack application serving a registry's Prometheus text.
    class RackApp
      def initialize(metrics)
        raise TypeError, "metrics must be a LeaseMachines::Metrics, got #{metrics.inspect}" unless metrics.is_a?(Metrics)

        @metrics = metrics
        freeze
      end

      def call(env)
        method = env["REQUEST_METHOD"]
        unless %w[GET HEAD].include?(method)
          return [405, { "content-type" => "text/plain", "allow" => "GET, HEAD" }, ["Method Not Allowed\n"]]
        end

        body = @metrics.to_prometheus
        headers = { "content-type" => Exposition::CONTENT_TYPE, "content-length" => body.bytesize.to_s }
        [200, headers, method == "HEAD" ? [] : [body]]
      end
    end
  end
end
