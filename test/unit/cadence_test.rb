# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"

module LeaseMachines
  # Cadence: the spans of SPEC section 4 (ttl, renew_after, warn_before), a
  # frozen value object.
  class CadenceTest < Minitest::Test
    include ValueAssertions

    RULE = "need ttl > 0, renew_after > 0, warn_before < ttl and renew_after <= ttl - warn_before"
    INVALID_CADENCE = /\Ainvalid cadence \(ttl: .*\): #{Regexp.escape(RULE)}\z/

    def cadence(ttl: 30, renew_after: 10, warn_before: 5)
      Cadence.new(ttl: ttl, renew_after: renew_after, warn_before: warn_before)
    end

    def test_valid_cadences
      assert_equal 30.0, cadence.ttl
      assert_equal 10.0, cadence.renew_after
      assert_equal 5.0, cadence.warn_before
      # renew_after may be exactly ttl - warn_before; warn_before may be zero.
      assert_equal 25.0, cadence(renew_after: 25).renew_after
      assert_equal 0.0, cadence(warn_before: 0).warn_before
      assert_equal 0.25, cadence(ttl: 0.5, renew_after: 0.25, warn_before: 0.25).renew_after
    end

    def test_invalid_cadences_raise_argument_error
      [
        { ttl: 0, renew_after: 0, warn_before: 0 },
        { ttl: 30, renew_after: 0, warn_before: 5 },
        { ttl: 30, renew_after: 10, warn_before: 30 },
        { ttl: 30, renew_after: 10, warn_before: 31 },
        { ttl: 30, renew_after: 25.000000001, warn_before: 5 },
        { ttl: 30, renew_after: 31, warn_before: 0 }
      ].each do |spans|
        error = assert_raises(ArgumentError, spans.inspect) { Cadence.new(**spans) }
        assert_match INVALID_CADENCE, error.message
      end
      assert_error(ArgumentError, "invalid cadence (ttl: 30, renew_after: 26, warn_before: 5): #{RULE}") do
        cadence(renew_after: 26)
      end
    end

    def test_cadence_value_semantics
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      same = Cadence.new(ttl: 30.0, renew_after: 10.0, warn_before: 5.0)

      assert_value_semantics(cadence, same,
                             Cadence.new(ttl: 31, renew_after: 10, warn_before: 5),
                             Cadence.new(ttl: 30, renew_after: 9, warn_before: 5),
                             Cadence.new(ttl: 30, renew_after: 10, warn_before: 4))
    end

    def test_cadence_readers_to_h_deconstruct_and_inspect
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5.5)

      assert_predicate cadence, :frozen?
      assert_equal [30.0, 10.0, 5.5], [cadence.ttl, cadence.renew_after, cadence.warn_before]
      assert_equal({ ttl: 30.0, renew_after: 10.0, warn_before: 5.5, max_hold: nil }, cadence.to_h)
      case cadence
      in { ttl:, warn_before: }
        assert_equal [30.0, 5.5], [ttl, warn_before]
      end
      assert_equal "#<LeaseMachines::Cadence ttl=30.0 renew_after=10.0 warn_before=5.5 max_hold=nil>", cadence.inspect
    end

    # max_hold (hold's, docs/RUNTIME.md): when renewals end, at least ttl.
    def test_max_hold_is_at_least_the_ttl
      assert_nil cadence.max_hold
      assert_equal 60.0, Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: 60).max_hold
      assert_equal 30.0, Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: 30).max_hold
      assert_error(ArgumentError, "max_hold must be at least ttl (30), got 29.5") do
        Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: 29.5)
      end
      assert_error(ArgumentError, "max_hold must be a finite, non-negative number of seconds, got NaN") do
        Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: Float::NAN)
      end
      refute_equal cadence, Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: 60)
    end

    def test_cadence_copies_are_whole_cadences
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)

      [cadence.dup, cadence.clone].each do |copy|
        assert_equal cadence, copy
        assert_equal 30.0, copy.ttl
        assert_equal 25.0, Holder.new(token: 1, at: 0, cadence: copy).warning_deadline
      end
    end
  end
end
