# frozen_string_literal: true

module LeaseMachines
  module Testing
    # Minitest assertions (`include LeaseMachines::Testing::Assertions` in a
    # test class; ActiveSupport::TestCase is a Minitest::Test). They watch
    # the lease events ({LeaseMachines.subscribe}), so they see the leases of
    # any store and of {Testing.bypass!}.
    module Assertions
      # Asserts that the block took a lease on `resource` (or, under
      # `limit:`, one of its slots) and let it go before it returned.
      # @return the block's value
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

      # Asserts that the block raised FencedError (a fenced write, refused).
      # @return [FencedError]
      def assert_fenced(message = nil, &)
        assert_raises(FencedError, *message, &)
      end
    end
  end
end
