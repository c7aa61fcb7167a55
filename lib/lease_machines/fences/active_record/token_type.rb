# frozen_string_literal: true

module LeaseMachines
  module Fences
    # The ActiveModel type of a model's token column (declared by
    # {Record::ClassMethods#fenced_by}): an Integer in 0..2**64-1 in Ruby,
    # and in the database the 20-digit text of {StoredToken}, which is exact
    # and compares correctly both in an SQLite TEXT column and in a
    # PostgreSQL numeric(20,0) (or text) column. Nothing is converted:
    # assigning "5" or 5.0 raises, as every token argument of the gem does.
    class TokenType < ::ActiveModel::Type::Value
      # @param model [Class] the model, and `column` its token column: how
      #   messages name it ("Report#lease_token", read when one is raised, so
      #   a class named after the column was declared is named too)
      def initialize(model, column)
        super()
        @model = model
        @column = column
      end

      def type
        :lease_machines_token
      end

      # @return [Integer, nil]
      # @raise [TypeError, RangeError] for anything but nil or a token
      def cast(value)
        value.nil? ? nil : Token.check(value, label)
      end

      # @return [Integer, nil] the stored value as a token
      # @raise [StoreError] for a stored value that is not one
      def deserialize(value)
        StoredToken.read(value, label)
      end

      # @return [String, Integer, nil] the 20-digit text; on MySQL the
      #   Integer, which it quotes as a number: MySQL compares a DECIMAL
      #   column with a string as floating-point numbers (inexact above
      #   2**53), with an integer exactly
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

      def label
        "#{@model.name || @model.inspect}##{@column}"
      end
    end
  end
end
