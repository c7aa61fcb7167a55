# frozen_string_literal: true

require "active_support/log_subscriber"

module LeaseMachines
  module Rails
    # The lease events in the Rails log: routine at debug, trouble at warn, leadership at info.
    class LogSubscriber < ActiveSupport::LogSubscriber
      DEBUG_EVENTS = %i[acquire renew release].freeze
      WARN_EVENTS = %i[at_risk lost fenced fence_refused].freeze
      INFO_EVENTS = %i[elected deposed enqueue_skipped].freeze
      SHOWN = %i[resource owner token status reason].freeze

      # ActiveSupport 7.1+ silences a debug or info event below the logger's level: a hold then builds no event for
      # it. (It has no check for warn; the trouble events are rare, and always heard.)
      { debug: DEBUG_EVENTS, warn: WARN_EVENTS, info: INFO_EVENTS }.each do |level, names|
        names.each do |name|
          define_method(name) { |event| send(level) { line(name, event) } }
          subscribe_log_level(name, level) if level != :warn && respond_to?(:subscribe_log_level, true)
        end
      end

      private

      def line(name, event)
        payload = event.payload
        fields = SHOWN.filter_map { |key| "#{key}=#{payload[key]}" unless payload[key].nil? }
        payload[:tags]&.each { |key, value| fields << "#{key}=#{value}" }
        ms = payload[:duration] ? payload[:duration] * 1000.0 : event.duration
        format("lease_machines %<name>s (%<ms>.1fms) %<fields>s", name: name, ms: ms, fields: fields.join(" "))
      end
    end
  end
end
