# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # What `hold` returns: a separate object, so that no value a block
    # returns (nil, false) can be mistaken for "not acquired". Made once a hold, by the runtime only:
    # positional arguments (keywords through `new` cost a Hash each).
    class Outcome
      attr_reader :value, :decision

      def initialize(held, value, decision)
        @held = held
        @value = value
        @decision = decision
        freeze
      end

      def held? = @held

      def inspect
        @held ? "#<#{self.class.name} held value=#{@value.inspect}>" : "#<#{self.class.name} not held #{@decision.inspect}>"
      end
      alias to_s inspect
    end
  end
end
