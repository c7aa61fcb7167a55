# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # What `hold` returns: a separate object, so that no value a block
    # returns (nil, false) can be mistaken for "not acquired".
    class Outcome
      # @return [Object, nil] the block's value (nil when it did not run)
      attr_reader :value
      # @return [Decision] the grant, or the last rejection
      attr_reader :decision

      def initialize(held:, value:, decision:)
        @held = held
        @value = value
        @decision = decision
        freeze
      end

      # @return [Boolean] true when the lease was acquired and the block ran
      def held?
        @held
      end

      def inspect
        @held ? "#<#{self.class.name} held value=#{@value.inspect}>" : "#<#{self.class.name} not held #{@decision.inspect}>"
      end
      alias to_s inspect
    end
  end
end
