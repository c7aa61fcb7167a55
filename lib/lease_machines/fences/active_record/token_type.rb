# frozen_string_literal: true

module LeaseMachines
  module Fences
    # The ActiveModel type of a model's token column: an Integer in 0..2**64-1 in Ruby,
    # the 20-digit text of {StoredToken} in the database. Nothing is converted: "5" or
    # 5.0 raises, as every token argument of the gem does.
    class TokenType < ::ActiveModel::Type::Value
      # `model` and `column` name it in messages ("Report#lease_token").
      def initialize(model, column)
        super()
        @model = model
        @column = column
      end

      def type
        :lease_machines_token
      end

      def cast(value)
        value.nil? ? nil : Token.check(value, label)
      end

      def deserialize(value)
        StoredToken.read(value, label)
      end

      # On MySQL the Integer, quoted as a number: MySQL compares a DECIMAL column with a
      # string as floating-point numbers (inexact above 2**53), with an integer exactly.
      def serialize(value)
        return nil if value.nil?

        token = cast(value)
        mysql? ? token : StoredToken.text(token)
      end

      def ==(other)
        other.is_a?(TokenType) && other.label == label
      end
      alias eql? ==

      def hash
        [self.class, label].hash
      end

      protected

      def mysql?
        @model.connection.adapter_name.match?(/mysql/i)
      end

      # Read when raised, so a class named after `fenced_by` ran is named too.
      def label
        "#{@model.name || @model.inspect}##{@column}"
      end
    end
  end
end
