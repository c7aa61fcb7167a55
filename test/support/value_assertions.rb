# frozen_string_literal: true

module LeaseMachines
  # Helpers for the frozen value objects (Lease, Decision, Checkpoint, Cadence),
  # included by their tests.
  module ValueAssertions
    def lease(owner: 7, token: 1, expires_at: 15)
      Lease.new(owner: owner, token: token, expires_at: expires_at)
    end

    # Objects that compare equal must hash equal; objects that differ in any
    # field must compare unequal.
    def assert_value_semantics(value, same, *different)
      assert_equal value, same
      assert value.eql?(same)
      assert_equal value.hash, same.hash
      assert_equal 1, { value => :a, same => :b }.size
      different.each do |other|
        refute_equal value, other
        refute value.eql?(other)
      end
      refute_equal value, value.to_h
      refute_equal value, nil
    end

    # A value object can be copied but never unfrozen: `clone(freeze: false)`
    # either refuses (as Integer does) or still gives a frozen object.
    def assert_stays_frozen(value)
      assert_predicate value, :frozen?
      [value.dup, value.clone].each do |copy|
        assert_predicate copy, :frozen?
        assert_equal value, copy
      end
      begin
        thawed = value.clone(freeze: false)
      rescue ArgumentError => e
        assert_match(/unfreeze/, e.message)
      else
        assert_predicate thawed, :frozen?
      end
      assert_raises(FrozenError) { value.instance_variable_set(:@token, 2) }
    end
  end
end
