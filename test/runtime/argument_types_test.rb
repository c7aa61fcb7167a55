# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # The runtime's arguments of the wrong type or value: each raises a clear
  # error naming the argument, before anything is acquired. Ill-typed on
  # purpose (listed in rakelib/rbs.rake's ILL_TYPED).
  class RuntimeArgumentsTest < Minitest::Test
    include RuntimeHelper

    # tags: (events_test.rb shows what they do).
    def test_tags_are_a_hash_of_symbols_to_plain_values
      [{ "job" => "x" }, { job: Object.new }, [[:job, "x"]]].each do |tags|
        error = assert_raises(TypeError) { hold(tags: tags) { flunk "ran" } }
        assert_match(/tags must be a Hash of Symbol => String, Symbol or Integer, got/, error.message)
      end
    end

    # label: (holder_label_test.rb shows what it does).
    def test_a_label_is_a_string
      [:web, 42, ["web"]].each do |label|
        error = assert_raises(TypeError) { hold(label: label) { flunk "ran" } }
        assert_equal "label must be a String or nil (the holder's own words), got #{Stores.described(label)}",
                     error.message
      end
    end

    def test_arguments_are_checked_before_anything_is_acquired
      {
        -> { hold(wait: -1) { flunk "ran" } } => [ArgumentError, "wait must be a finite, non-negative number of seconds, got -1"],
        -> { hold(wait: "10") { flunk "ran" } } => [TypeError, 'wait must be an Integer or Float number of seconds, got "10"'],
        -> { hold(wait: Float::NAN) { flunk "ran" } } =>
          [ArgumentError, "wait must be a finite, non-negative number of seconds, got NaN"],
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

    # ttl, renew_after and warn_before: a wrong type is a TypeError, a value
    # out of range an ArgumentError, each naming the keyword the caller gave
    # and its value (never one derived from it, never a comparison's error).
    def test_the_timings_name_the_keyword_that_is_wrong
      expected = {
        { ttl: Float::NAN } => [ArgumentError, "ttl must be a finite, positive number of seconds, got NaN"],
        { ttl: Float::INFINITY } => [ArgumentError, "ttl must be a finite, positive number of seconds, got Infinity"],
        { ttl: -Float::INFINITY } => [ArgumentError, "ttl must be a finite, positive number of seconds, got -Infinity"],
        { ttl: 0 } => [ArgumentError, "ttl must be a finite, positive number of seconds, got 0"],
        { ttl: -1 } => [ArgumentError, "ttl must be a finite, positive number of seconds, got -1"],
        { ttl: 30r } => [TypeError, "ttl must be an Integer or Float number of seconds, got (30/1)"],
        { ttl: 1, renew_after: 2 } => [ArgumentError, "renew_after must be at most ttl (1), got 2"],
        { ttl: 30, renew_after: Float::NAN } =>
          [ArgumentError, "renew_after must be a finite, positive number of seconds, got NaN"],
        { ttl: 30, renew_after: 0 } => [ArgumentError, "renew_after must be a finite, positive number of seconds, got 0"],
        { ttl: 30, renew_after: "5" } => [TypeError, 'renew_after must be an Integer or Float number of seconds, got "5"'],
        { ttl: 30, warn_before: 40 } => [ArgumentError, "warn_before must be less than ttl (30), got 40"],
        { ttl: 30, warn_before: 30 } => [ArgumentError, "warn_before must be less than ttl (30), got 30"],
        { ttl: 30, warn_before: -1 } => [ArgumentError, "warn_before must be a finite, non-negative number of seconds, got -1"],
        { ttl: 30, warn_before: Float::INFINITY } =>
          [ArgumentError, "warn_before must be a finite, non-negative number of seconds, got Infinity"],
        { ttl: 30, warn_before: :soon } => [TypeError, "warn_before must be an Integer or Float number of seconds, got :soon"]
      }
      raised = expected.to_h do |timings, _|
        error = assert_raises(StandardError, timings.inspect) do
          authority.hold(owner: 7, clock: @clock, **timings) { flunk "ran" }
        end
        [timings, [error.class, error.message]]
      end
      assert_equal expected, raised
      assert_nil authority.checkpoint.last_issued
    end

    def test_timings_that_fit_each_other_pass_and_the_defaults_fit_the_ones_given
      assert_equal [1, 1, 0.0], cadence_of(ttl: 1, renew_after: 1)
      assert_equal [30, 10.0, 7.5], cadence_of(ttl: 30)
      assert_equal [30, 5.0, 25], cadence_of(ttl: 30, warn_before: 25)
      assert_equal [30, 10.0, 0], cadence_of(ttl: 30, warn_before: 0)
    end

    # Holding.cadence reuses the last cadence it made: only for the very same timings (eql?: 30 is not 30.0).
    def test_each_hold_gets_the_cadence_of_its_own_timings_whatever_came_before
      timings = [{ ttl: 30 }, { ttl: 30, renew_after: 5 }, { ttl: 30 }, { ttl: 30.0 }, { ttl: 30, max_hold: 60 },
                 { ttl: 30 }, { ttl: 30, warn_before: 25 }, { ttl: 30, warn_before: 25 }]
      made = timings.map do |given|
        cadence = Runtime::Holding.cadence(given.fetch(:ttl), given[:renew_after], given[:warn_before], given[:max_hold])
        [cadence.ttl, cadence.renew_after, cadence.warn_before, cadence.max_hold]
      end
      assert_equal [[30, 10.0, 7.5, nil], [30, 5, 7.5, nil], [30, 10.0, 7.5, nil], [30.0, 10.0, 7.5, nil],
                    [30, 10.0, 7.5, 60], [30, 10.0, 7.5, nil], [30, 5.0, 25, nil], [30, 5.0, 25, nil]], made
      assert_kind_of Float, made[3].first, "ttl 30.0 is not the cadence of ttl 30"
      assert_raises(ArgumentError) { Runtime::Holding.cadence(30, 40, nil) }
      assert_equal 10.0, Runtime::Holding.cadence(30, nil, nil).renew_after
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

    private

    # A hold with these timings runs; the cadence they make.
    def cadence_of(**timings)
      assert_predicate authority.hold(owner: 7, clock: @clock, **timings) { nil }, :held?, timings.inspect
      cadence = Runtime::Holding.cadence(timings.fetch(:ttl), timings[:renew_after], timings[:warn_before])
      [cadence.ttl, cadence.renew_after, cadence.warn_before]
    end
  end
end
