# frozen_string_literal: true

module LeaseMachines
  module Testing
    # Minitest assertions, watching the lease events (so any store and {Testing.bypass!}).
    module Assertions
      def assert_leased(resource, message = nil)
        events = []
        subscriber = LeaseMachines.subscribe do |name, payload|
          events << [name, payload[:status]] if Runtime::Slots.of?(payload[:resource], resource)
        end
        value = begin
          yield
        ensure
          LeaseMachines.unsubscribe(subscriber)
        end
        assert events.include?(%i[acquire granted]), message || "expected a lease on #{resource.inspect}, saw #{events}"
        assert events.any? { |name, _| name == :release }, message || "the lease on #{resource.inspect} was not released"
        value
      end

      def assert_fenced(message = nil, &) = assert_raises(FencedError, *message, &)
    end
  end
end
