# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # The runtime's arguments of the wrong type or value: each raises a clear
  # error naming the argument, before anything is acquired. Ill-typed on
  # purpose (listed in rakelib/rbs.rake's ILL_TYPED).
  class RuntimeArgumentsTest < Minitest::Test
    include RuntimeHelper

    def test_arguments_are_checked_before_anything_is_acquired
      {
        -> { hold(wait: -1) { flunk "ran" } } => [ArgumentError, "wait must be a finite, non-negative number of seconds, got -1"],
        lambda {
          hold(wait: "1") do
            flunk "ran"
          end
        } => [ArgumentError, 'wait must be a finite, non-negative number of seconds, got "1"'],
        -> { hold(interrupt: 1) { flunk "ran" } } => [TypeError, "interrupt must be true or false, got 1"],
        -> { hold(ttl: "30") { flunk "ran" } } => [TypeError, 'ttl must be an Integer or Float number of seconds, got "30"'],
        -> { hold(on_lost: 1) { flunk "ran" } } => [TypeError, "on_lost must be nil or respond to #call, got 1"],
        lambda {
          hold(clock: :now) do
            flunk "ran"
          end
        } => [TypeError, "clock must respond to #now, #now_ns, #sleep and #wait, got :now"],
        -> { hold } => [ArgumentError, "hold needs a block"],
        -> { hold(owner: -1) { flunk "ran" } } => [RangeError, "owner must be an Integer in 0..18446744073709551615, got -1"]
      }.each do |call, (klass, message)|
        error = assert_raises(klass) { call.call }
        assert_equal message, error.message
      end
      assert_nil authority.checkpoint.last_issued
    end

    def test_a_name_that_is_not_a_string_raises_type_error_naming_it
      [nil, 42, :host, ["a"]].each do |value|
        error = assert_raises(TypeError) { LeaseMachines.owner_id(value) }
        assert_equal "name must be a String, got #{value.inspect} (#{value.class})", error.message
      end
    end

    def test_subscribe_needs_a_callable
      assert_raises(ArgumentError) { LeaseMachines.subscribe }
      error = assert_raises(TypeError) { LeaseMachines.subscribe(42) }
      assert_equal "subscriber must respond to #call, got 42", error.message
    end

    def test_the_elector_needs_callables_and_an_authority
      error = assert_raises(TypeError) { Elector.new(authority, on_elected: nil, on_deposed: ->(_) {}) }
      assert_equal "on_elected must respond to #call, got nil", error.message
      error = assert_raises(TypeError) { Elector.new(42, on_elected: ->(_) {}, on_deposed: ->(_) {}) }
      assert_equal "authority must respond to #hold, got 42", error.message
    end
  end
end
