# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # A hold's `on_at_risk:` and `on_lost:`, each nil or a callable taking the {Held}.
    class Callbacks
      def initialize(on_at_risk:, on_lost:)
        { on_at_risk: on_at_risk, on_lost: on_lost }.each do |name, callable|
          next if callable.nil? || callable.respond_to?(:call)

          raise TypeError, "#{name} must be nil or respond to #call, got #{callable.inspect}"
        end
        @callables = { at_risk: on_at_risk, lost: on_lost }.freeze
        freeze
      end

      NONE = new(on_at_risk: nil, on_lost: nil)

      # A hold's callbacks; most holds have none, and share {NONE}.
      def self.for(on_at_risk:, on_lost:)
        on_at_risk.nil? && on_lost.nil? ? NONE : new(on_at_risk: on_at_risk, on_lost: on_lost)
      end

      def call(event, held)
        @callables.fetch(event)&.call(held)
      rescue StandardError => e
        Logging.warning("lease_machines: on_#{event} for #{held.subject} raised #{e.class}: #{e.message}")
      end
    end
  end
end
