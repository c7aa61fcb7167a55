# frozen_string_literal: true

module LeaseMachines
  # The gem's own log lines (a refused release, a callback or a renewal that raised, an event subscriber that raised),
  # written to `LeaseMachines.configuration.logger`, never to $stderr behind the app's back.
  module Logging
    # The default logger's device: whatever $stderr is when a line is
    # written, as for Kernel#warn.
    module StderrDevice
      def self.write(text) = $stderr.write(text)
      def self.close = nil
    end

    module_function

    def warning(message)
      LeaseMachines.configuration.logger.warn(message)
    rescue StandardError => e
      Kernel.warn("#{message} (the configured logger raised #{e.class}: #{e.message})")
    end

    def subject(resource, tags) = [resource.inspect, *tags&.map { |key, value| "#{key}=#{value}" }].join(" ")
  end
end
