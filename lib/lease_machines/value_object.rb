# frozen_string_literal: true

# See lib/lease_machines.rb.
module LeaseMachines
  # Copying for the frozen value objects the extension makes ({Lease},
  # {Decision}, {Checkpoint}): like Integer or Symbol, a copy is the object
  # itself, and it cannot be unfrozen.
  module ValueObject
    def dup
      self
    end

    def clone(freeze: nil)
      raise ArgumentError, "can't unfreeze #{self.class.name}" if freeze == false

      self
    end

    # `count` space-separated decimal Integers ("-" for nil) from a Marshal dump.
    def self.integers(text, count)
      fields = text.to_s.split
      raise TypeError, "marshal data too short or too long: #{text.inspect}" unless fields.size == count

      fields.map { |field| field == "-" ? nil : Integer(field, 10) }
    end

    private

    # An instance of exactly this class? `Module#===` answers for any object,
    # a BasicObject too, where `other.instance_of?` would raise.
    def same_class?(other)
      self.class === other && other.instance_of?(self.class) # rubocop:disable Style/CaseEquality
    end
  end

  # `value.inspect` for an error message, even for a BasicObject or an object
  # whose inspect raises.
  def self.show(value)
    value.inspect
  rescue StandardError
    "#<object id=#{value.__id__}>"
  end
end
