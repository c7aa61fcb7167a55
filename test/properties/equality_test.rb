# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"

module LeaseMachines
  # Every value object (Lease, Decision, Checkpoint, Cadence) compares with
  # any object at all.
  class EqualityTest < Minitest::Test
    include ValueAssertions

    # Ruby's own values answer false to == with anything, a BasicObject too.
    def test_equality_with_any_object_is_false_and_never_raises
      values = [lease, Decision::RELEASED, Authority.new.checkpoint, Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)]
      strangers = [nil, 1, "lease", :lease, [], {}, Object.new, BasicObject.new]
      class_of = Kernel.instance_method(:class)
      values.each do |value|
        strangers.each do |stranger|
          where = -> { "#{value.class} == a #{class_of.bind_call(stranger)}" }

          assert_equal false, value == stranger, where
          assert_equal false, value.eql?(stranger), where
        end
      end
    end
  end
end
