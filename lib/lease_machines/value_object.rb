# frozen_string_literal: true

# See lib/lease_machines.rb.
module LeaseMachines
  # Value semantics for the frozen value objects ({Lease}, {Decision}, {Checkpoint}, {Cadence}).
  module ValueObject
    def self.included(base)
      super
      base.extend(Fields)
    end

    # The class-level declaration.
    module Fields
      private

      def value_fields(identity:, shown: identity)
        fields = identity | shown
        raise ArgumentError, "not reader names: #{fields.inspect}" unless fields.all? { |f| f.match?(/\A[a-z_][a-z0-9_]*\z/) }

        equal = identity.map { |field| "other.#{field} == #{field}" }.join(" && ")
        plain = shown.map { |field| "#{field}: ValueObject.plain(#{field})" }.join(", ")
        raw = shown.map { |field| "#{field}: #{field}" }.join(", ")
        seen = shown.map { |field| "#{field}=\#{#{field}.inspect}" }.join(" ")
        class_eval <<~RUBY, __FILE__, __LINE__ + 1
          def ==(other) = same_class?(other) && #{equal}       # def ==(other) = same_class?(other) && other.owner == owner && ...
          alias eql? ==
          def hash = [self.class, #{identity.join(', ')}].hash # def hash = [self.class, owner, token, expires_at_ns].hash
          def to_h = { #{plain} }                              # def to_h = { owner: ValueObject.plain(owner), ... }
          def deconstruct_keys(_keys) = { #{raw} }             # def deconstruct_keys(_keys) = { owner: owner, ... }
          def inspect = "#<\#{self.class.name} #{seen}>"      # def inspect = "#<\#{self.class.name} owner=\#{owner.inspect} ...>"
          alias to_s inspect
        RUBY
      end
    end

    def self.plain(value) = ValueObject === value ? value.to_h : value # rubocop:disable Style/CaseEquality -- any object

    def dup = self

    def clone(freeze: nil)
      raise ArgumentError, "can't unfreeze #{self.class.name}" if freeze == false

      self
    end

    def self.integers(text, count)
      fields = text.to_s.split
      raise TypeError, "marshal data too short or too long: #{text.inspect}" unless fields.size == count

      fields.map { |field| field == "-" ? nil : Integer(field, 10) }
    end

    private

    def same_class?(other) = self.class === other && other.instance_of?(self.class) # rubocop:disable Style/CaseEquality
  end

  def self.show(value)
    value.inspect
  rescue StandardError
    "#<object id=#{value.__id__}>"
  end
end
