# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # The Prometheus text format, version 0.0.4, written directly (Debian has no prometheus-client gem for bookworm).
    module Exposition
      CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

      module_function

      def text(series)
        out = +""
        Catalog::METRICS.each do |id, metric|
          out << "# HELP #{metric.name} #{escape_help(metric.help)}\n# TYPE #{metric.name} #{metric.type}\n"
          labelled(id, series.fetch(id, {})).each do |labels, value|
            metric.type == :histogram ? histogram(out, metric.name, labels, value) : sample(out, metric.name, labels, value)
          end
        end
        out
      end

      def labelled(id, series)
        names = ["family", *Catalog::METRICS.fetch(id).labels]
        named = series.map do |values, value|
          [names.zip(values).filter_map { |name, label| [name, label.to_s] unless label.nil? }, value]
        end
        named.sort_by(&:first)
      end

      def histogram(out, name, labels, histogram)
        histogram.cumulative.each { |bound, count| sample(out, "#{name}_bucket", labels + [["le", number(bound)]], count) }
        sample(out, "#{name}_sum", labels, histogram.sum)
        sample(out, "#{name}_count", labels, histogram.count)
      end

      def sample(out, name, labels, value)
        out << name
        out << "{" << labels.map { |key, label| "#{key}=\"#{escape_label(label)}\"" }.join(",") << "}" unless labels.empty?
        out << " " << number(value) << "\n"
      end

      def number(value)
        return value.to_s if value.is_a?(Integer) || value.finite?
        return "NaN" if value.nan?

        value.positive? ? "+Inf" : "-Inf"
      end

      def escape_label(value) = value.to_s.gsub(/[\\"\n]/, "\\" => "\\\\", '"' => '\\"', "\n" => "\\n")
      def escape_help(text) = text.gsub(/[\\\n]/, "\\" => "\\\\", "\n" => "\\n")
    end
  end
end
