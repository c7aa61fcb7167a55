# frozen_string_literal: true

module LeaseMachines
  # The gem's own log lines (a refused release, a callback or a renewal that
  # raised, an event subscriber that raised), written to
  # `LeaseMachines.configuration.logger`, never to $stderr behind the app's
  # back. @api private
  module Logging
    # The default logger's device: whatever $stderr is when a line is
    # written, as for Kernel#warn.
    module StderrDevice
      def self.write(text) = $stderr.write(text)
      def self.close = nil
    end

    module_function

    # Writes `message` at warn. A logger that raises is reported on $stderr
    # and never reaches the caller (often the renewal thread).
    def warning(message)
      LeaseMachines.configuration.logger.warn(message)
    rescue StandardError => e
      Kernel.warn("#{message} (the configured logger raised #{e.class}: #{e.message})")
    end

    # @param tags [Hash{Symbol => Object}, nil] a hold's `tags:` (a job's class and id)
    # @return [String] the resource and its tags, as log lines show them:
    #   `"reports/nightly" job=NightlyReport jid=4f1c`
    def subject(resource, tags)
      [resource.inspect, *tags&.map { |key, value| "#{key}=#{value}" }].join(" ")
    end
  end
end
