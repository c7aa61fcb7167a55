# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require_relative "support/limits"

module LeaseMachines
  # Shared helpers for the suite.
  #
  # LEASE_MACHINES_GC_STRESS=1 (`rake test:gc_stress`) turns GC.stress on for
  # the body of every test, so a Ruby object the extension forgot to keep alive
  # is collected at once and the test crashes or fails. Loops shrink under
  # stress through #iterations; every other assertion stays the same.
  module TestHelper
    include TestLimits

    GC_STRESS = ENV["LEASE_MACHINES_GC_STRESS"] == "1"
    # True when the suite runs under `rbs/test/setup` (rake rbs:test).
    RBS_RUNTIME_CHECK = defined?(::RBS::Test::Tester) ? true : false

    def before_setup
      super
      GC.stress = true if GC_STRESS
    end

    def after_teardown
      GC.stress = false if GC_STRESS
      super
    end

    # `count` normally; far fewer under GC.stress, where every allocation runs
    # a full collection. Never less than `floor`.
    def iterations(count, floor: 3)
      return count unless GC_STRESS

      [count / 200, floor].max
    end

    # Every pair of a row and a value normally. Under GC.stress, a covering
    # subset: every row with at least one value and every value with at least
    # one row (max(rows, values) pairs instead of rows * values).
    def pairs(rows, values)
      return rows.product(values) unless GC_STRESS

      Array.new([rows.size, values.size].max) { |at| [rows[at % rows.size], values[at % values.size]] }
    end

    # The whole list normally. Under GC.stress, `per` of its items, picked by
    # `index` so that indexes 0, 1, 2... together cover the whole list.
    def stress_slice(list, index, per: 2)
      return list unless GC_STRESS

      Array.new(per) { |offset| list[((index * per) + offset) % list.size] }
    end

    # An authority that granted `owner` a lease (token 1) from `now` for `ttl`.
    def granted_authority(owner: 7, now: 10, ttl: 5, clock_policy: :reject)
      authority = Authority.new(clock_policy: clock_policy)
      decision = authority.acquire(owner: owner, now: now, ttl: ttl)
      assert_predicate decision, :granted?
      authority
    end

    # Asserts that the block raises `klass` whose message is `message` (a
    # String for equality, a Regexp for a match), and returns the exception.
    def assert_error(klass, message, &)
      error = assert_raises(klass, &)
      assert_equal klass, error.class, "expected exactly #{klass}, got #{error.class}: #{error.message}"
      if message.is_a?(Regexp)
        assert_match message, error.message
      else
        assert_equal message, error.message
      end
      error
    end

    # Runs the block, which must raise `klass`, and asserts that the authority's
    # whole state (and its clock policy) is exactly what it was before.
    def assert_raises_unchanged(authority, klass, message = nil, &)
      before = authority.checkpoint
      policy = authority.clock_policy
      error = message ? assert_error(klass, message, &) : assert_raises(klass, &)
      assert_equal before, authority.checkpoint, "a call that raised #{klass} changed the authority"
      assert_equal policy, authority.clock_policy
      error
    end

    # Every `every`-th item of `list` under GC.stress, the whole list otherwise:
    # for long lists of cases that exercise Ruby's own argument handling more
    # than the extension.
    def thinned_under_stress(list, every: 4)
      return list unless GC_STRESS

      list.each_slice(every).map(&:first)
    end

    # Runs the block with GC.stress off: for test machinery (parsing the
    # README, say) that would otherwise dominate a stress run.
    def without_gc_stress
      return yield unless GC_STRESS

      # Restores what it found, so that a nested call (a block run unstressed
      # that itself parses unstressed) does not switch stress back on early.
      stressed = GC.stress
      GC.stress = false
      begin
        yield
      ensure
        GC.stress = stressed
      end
    end

    # Calls `slot` (see test/support/entry_points.rb) with `value`, which must
    # raise exactly `klass` with `message` (a String, or a Regexp to match), and
    # leave the slot's subject as it was. Failure messages are built lazily:
    # under GC.stress every allocation costs a full collection.
    def assert_refused(slot, value, klass, message)
      where = -> { "#{slot} with #{value.inspect}" }
      subject = slot.subject.call
      before = slot.snapshot.call(subject)
      begin
        slot.call.call(subject, value)
      rescue klass => e
        assert_equal klass, e.class, where
        message.is_a?(Regexp) ? assert_match(message, e.message, where) : assert_equal(message, e.message, where)
        assert_equal before, slot.snapshot.call(subject), -> { "#{where.call} raised but changed its subject" }
      rescue StandardError => e
        flunk "#{where.call}: raised #{e.class} (#{e.message}), expected #{klass}"
      else
        flunk "#{where.call}: nothing was raised, expected #{klass}"
      end
    end

    # Compacts the heap as hard as this Ruby allows: moving every object that
    # can move, and checking every reference after the move.
    def compact_heap
      if GC.respond_to?(:verify_compaction_references)
        keywords = GC.method(:verify_compaction_references).parameters.map(&:last)
        if keywords.include?(:expand_heap)
          GC.verify_compaction_references(expand_heap: true, toward: :empty)
        else
          GC.verify_compaction_references(double_heap: true, toward: :empty)
        end
      else
        GC.compact
      end
    end
  end
end

Minitest::Test.include(LeaseMachines::TestHelper)
