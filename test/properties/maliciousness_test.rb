# frozen_string_literal: true

require "set"
require "test_helper"

module LeaseMachines
  # Throws every kind of value at every argument of every entry point. Each
  # call must either be accepted (when the value is valid there, by the rules
  # written out in ACCEPTS below) or raise TypeError, ArgumentError or
  # RangeError: never another exception, never a crash of the process.
  #
  # Ill-typed on purpose, so `rake rbs:test` leaves it out.
  class MaliciousnessTest < Minitest::Test
    REFUSALS = [TypeError, ArgumentError, RangeError].freeze

    # An object that answers every message with 1.
    class Anything < BasicObject
      def method_missing(*) = 1
      def respond_to_missing?(*) = true
    end

    def self.with_inspect(&)
      object = Object.new
      object.define_singleton_method(:inspect, &)
      object
    end

    def self.hostile_values
      lease = Lease.new(owner: 1, token: 1, expires_at: 1)
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      scalars = [nil, true, false, 0, 1, -1, 2**63, 2**64, -(2**64), 2**200, -(2**200), 0.0, -0.0, 2.9, -2.9, Float::MIN,
                 Float::MAX, -Float::MAX, Float::NAN, Float::INFINITY, -Float::INFINITY, 1r, Complex(1, 1)]
      strings = ["", "1", "0x10", "1e3", "\0", "\xff".b, "x" * 100_000, :reject, :clamp, :granted, :released, :occupied]
      containers = [[], [1], [nil], {}, { owner: 1 }, { token: 1, at: 0 }, Struct.new(:owner).new(1), 1..2, Set[1]]
      objects = [Object.new, BasicObject.new, Anything.new, Class, Module, Kernel, Comparable, Lease, Checkpoint, Integer,
                 method(:puts), proc { 1 }, Thread.current, Encoding::UTF_8, ObjectSpace::WeakMap.new, Time.at(0)]
      inspectors = [with_inspect { raise "no inspect for you" }, with_inspect { nil }, with_inspect { 42 },
                    with_inspect { "\xff\xfe".dup.force_encoding(Encoding::UTF_8) }, with_inspect { "a\0b" },
                    with_inspect { throw :away }]
      ours = [lease, Decision::RELEASED, Authority.new.checkpoint, Authority.new, Fence.new, cadence,
              Holder.new(token: 1, at: 0, cadence: cadence)]
      scalars + strings + containers + objects + inspectors + ours
    end

    HOSTILE = hostile_values.freeze

    def self.integer_in?(value, range) = Integer === value && range.cover?(value) # rubocop:disable Style/CaseEquality

    def self.seconds?(value)
      case value
      when Integer then value.between?(0, U64_MAX)
      when Float then value.finite? && value >= 0 && value < 2.0**64
      else false
      end
    end

    # What each kind of argument accepts, from the README's input rules.
    # `===` is used because BasicObject answers nothing else.
    ACCEPTS = {
      owner: ->(value) { integer_in?(value, 0..U64_MAX) },
      issued: ->(value) { integer_in?(value, 1..U64_MAX) },
      optional: ->(value) { NilClass === value || integer_in?(value, 1..U64_MAX) }, # rubocop:disable Style/CaseEquality
      time: ->(value) { seconds?(value) },
      nanos: ->(value) { integer_in?(value, 0..(((2**64) * 1_000_000_000) - 1)) },
      # A cadence span that must be at least one nanosecond once rounded.
      span: ->(value) { seconds?(value) && value * 1_000_000_000 >= 0.5 },
      policy: ->(value) { Symbol === value && %i[reject clamp].include?(value) }, # rubocop:disable Style/CaseEquality
      checkpoint: ->(value) { Checkpoint === value }, # rubocop:disable Style/CaseEquality
      lease: ->(value) { NilClass === value || Lease === value }, # rubocop:disable Style/CaseEquality
      cadence: ->(value) { Cadence === value }, # rubocop:disable Style/CaseEquality
      status: ->(value) { Symbol === value && value == :released }, # rubocop:disable Style/CaseEquality
      granted_lease: ->(value) { Lease === value }, # rubocop:disable Style/CaseEquality
      reason: ->(value) { Symbol === value && Decision::REASONS.include?(value) } # rubocop:disable Style/CaseEquality
    }.freeze

    def self.entry_points
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      authority = -> { Authority.new.tap { |a| a.acquire(owner: 7, now: 10, ttl: 5) } }
      holder = -> { Holder.new(token: 3, at: 0, cadence: cadence) }
      {
        "Authority.new clock_policy:" => [:policy, ->(v) { Authority.new(clock_policy: v) }],
        "Authority.restore checkpoint" => [:checkpoint, ->(v) { Authority.restore(v) }],
        "Authority.restore clock_policy:" => [:policy, ->(v) { Authority.restore(Authority.new.checkpoint, clock_policy: v) }],
        "Authority#acquire owner:" => [:owner, ->(v) { authority.call.acquire(owner: v, now: 20, ttl: 5) }],
        "Authority#acquire now:" => [:time, ->(v) { authority.call.acquire(owner: 8, now: v, ttl: 5) }],
        "Authority#acquire ttl:" => [:time, ->(v) { authority.call.acquire(owner: 8, now: 20, ttl: v) }],
        "Authority#reacquire owner:" => [:owner, ->(v) { authority.call.reacquire(owner: v, now: 11, ttl: 5) }],
        "Authority#reacquire now:" => [:time, ->(v) { authority.call.reacquire(owner: 7, now: v, ttl: 5) }],
        "Authority#reacquire ttl:" => [:time, ->(v) { authority.call.reacquire(owner: 7, now: 11, ttl: v) }],
        "Authority#renew owner:" => [:owner, ->(v) { authority.call.renew(owner: v, token: 1, now: 11, ttl: 5) }],
        "Authority#renew token:" => [:owner, ->(v) { authority.call.renew(owner: 7, token: v, now: 11, ttl: 5) }],
        "Authority#renew now:" => [:time, ->(v) { authority.call.renew(owner: 7, token: 1, now: v, ttl: 5) }],
        "Authority#renew ttl:" => [:time, ->(v) { authority.call.renew(owner: 7, token: 1, now: 11, ttl: v) }],
        "Authority#release owner:" => [:owner, ->(v) { authority.call.release(owner: v, token: 1, now: 11) }],
        "Authority#release token:" => [:owner, ->(v) { authority.call.release(owner: 7, token: v, now: 11) }],
        "Authority#release now:" => [:time, ->(v) { authority.call.release(owner: 7, token: 1, now: v) }],
        "Lease.new owner:" => [:owner, ->(v) { Lease.new(owner: v, token: 1, expires_at: 1) }],
        "Lease.new token:" => [:issued, ->(v) { Lease.new(owner: 1, token: v, expires_at: 1) }],
        "Lease.new expires_at:" => [:time, ->(v) { Lease.new(owner: 1, token: 1, expires_at: v) }],
        "Lease#expired?" => [:time, ->(v) { Lease.new(owner: 1, token: 1, expires_at: 1).expired?(v) }],
        "Checkpoint.from_parts last_issued:" => [:optional,
                                                 ->(v) { Checkpoint.from_parts(last_issued: v, lease: nil, observed: 0) }],
        "Checkpoint.from_parts lease:" => [:lease, ->(v) { Checkpoint.from_parts(last_issued: U64_MAX, lease: v, observed: 0) }],
        "Checkpoint.from_parts observed:" => [:time, ->(v) { Checkpoint.from_parts(last_issued: nil, lease: nil, observed: v) }],
        "Lease.exact expires_at_ns:" => [:nanos, ->(v) { Lease.exact(owner: 1, token: 1, expires_at_ns: v) }],
        "Checkpoint.exact lease:" => [:lease, ->(v) { Checkpoint.exact(last_issued: U64_MAX, lease: v, observed_ns: 0) }],
        "Checkpoint.exact observed_ns:" => [:nanos, ->(v) { Checkpoint.exact(last_issued: nil, lease: nil, observed_ns: v) }],
        "Fence.new highest:" => [:optional, ->(v) { Fence.new(highest: v) }],
        "Fence#accept" => [:owner, ->(v) { Fence.new(highest: 1).accept(v) }],
        "Cadence.new ttl:" => [:span, ->(v) { Cadence.new(ttl: v, renew_after: 1e-9, warn_before: 0) }],
        "Cadence.new renew_after:" => [:span, ->(v) { Cadence.new(ttl: U64_MAX, renew_after: v, warn_before: 0) }],
        "Cadence.new warn_before:" => [:time, ->(v) { Cadence.new(ttl: U64_MAX, renew_after: 1, warn_before: v) }],
        "Holder.new token:" => [:issued, ->(v) { Holder.new(token: v, at: 0, cadence: cadence) }],
        "Holder.new at:" => [:time, ->(v) { Holder.new(token: 1, at: v, cadence: cadence) }],
        "Holder.new cadence:" => [:cadence, ->(v) { Holder.new(token: 1, at: 0, cadence: v) }],
        "Holder#renewal_due?" => [:time, ->(v) { holder.call.renewal_due?(v) }],
        "Holder#at_risk?" => [:time, ->(v) { holder.call.at_risk?(v) }],
        "Holder#refresh" => [:time, ->(v) { holder.call.refresh(v) }],
        "Holder#confirm token:" => [:owner, ->(v) { holder.call.confirm(token: v, at: 1) }],
        "Holder#confirm at:" => [:time, ->(v) { holder.call.confirm(token: 3, at: v) }],
        "Holder#reacquire token:" => [:owner, ->(v) { holder.call.reacquire(token: v, at: 1) }],
        "Holder#reacquire at:" => [:time, ->(v) { holder.call.reacquire(token: 4, at: v) }],
        "Decision.new status:" => [:status, ->(v) { Decision.new(status: v) }],
        "Decision.new lease:" => [:granted_lease, ->(v) { Decision.new(status: :granted, lease: v) }],
        "Decision.rejected" => [:reason, ->(v) { Decision.rejected(v) }]
      }
    end

    # One value: accepted exactly when the rules say so, otherwise refused
    # with one of the three exceptions. Returns :accepted or :refused.
    def attempt(label, kind, call, value)
      where = -> { "#{label} with #{Kernel.instance_method(:inspect).bind_call(value)[0, 60]}" }
      begin
        call.call(value)
        outcome = :accepted
      rescue *REFUSALS
        outcome = :refused
      rescue Exception => e # rubocop:disable Lint/RescueException
        flunk "#{where.call}: raised #{e.class} (#{e.message[0, 200]}), expected one of #{REFUSALS.join(', ')}"
      end
      expected = ACCEPTS.fetch(kind).call(value) ? :accepted : :refused

      assert_equal expected, outcome, where
      outcome
    end

    # Under GC.stress each entry point gets a few of the values, and the entry
    # points together get all of them (see TestHelper#stress_slice).
    entry_points.each_with_index do |(label, (kind, call)), index|
      name = label.downcase.gsub(/[^a-z0-9]+/, "_").delete_suffix("_")
      define_method(:"test_hostile_values_at_#{name}") do
        outcomes = stress_slice(HOSTILE, index).map { |value| attempt(label, kind, call, value) }

        assert_includes outcomes, :refused unless GC_STRESS
      end
    end

    def test_under_gc_stress_the_entry_points_together_try_every_value
      count = self.class.entry_points.size

      assert_operator count * 2, :>=, HOSTILE.size, "stress_slice(per: 2) would leave values untried"
    end

    def test_every_entry_point_is_covered
      covered = self.class.entry_points.keys.map { |label| label[/\A[\w:]+[.#][\w?]+/] }.uniq.sort

      assert_equal(%w[Authority#acquire Authority#reacquire Authority#release Authority#renew Authority.new
                      Authority.restore Cadence.new Checkpoint.exact Checkpoint.from_parts Decision.new Decision.rejected
                      Fence#accept Fence.new Holder#at_risk? Holder#confirm Holder#reacquire Holder#refresh
                      Holder#renewal_due? Holder.new Lease#expired? Lease.exact Lease.new], covered)
    end

    # Building a value object past its checked constructor (a subclass that
    # skips initialize, instance variables set on an allocated object) must
    # either be impossible or give an object that the extension refuses when
    # it is handed back.
    def assert_forgery_is_harmless(label, build, use)
      forged = build.call
    rescue TypeError, ArgumentError, NoMethodError => e
      assert_kind_of StandardError, e, label # it cannot even be built
    else
      assert_raises(*REFUSALS, label) { use.call(forged) }
    end

    def forgery(klass, **ivars)
      lambda do
        klass.__send__(:allocate).tap { |object| ivars.each { |name, value| object.instance_variable_set(:"@#{name}", value) } }
      end
    end

    def forged_leases
      {
        # rubocop:disable Lint/MissingSuper -- skipping the checked constructor is the point
        "a subclass that skips initialize" => -> { Class.new(Lease) { def initialize(*) = nil }.new },
        # rubocop:enable Lint/MissingSuper
        "a negative owner" => forgery(Lease, owner: -1, token: 1, expires_at_ns: 0),
        "token 0" => forgery(Lease, owner: 1, token: 0, expires_at_ns: 0),
        "a negative expiry" => forgery(Lease, owner: 1, token: 1, expires_at_ns: -1),
        "an expiry past the last instant" => forgery(Lease, owner: 1, token: 1, expires_at_ns: 2**200),
        "a Float expiry" => forgery(Lease, owner: 1, token: 1, expires_at_ns: 1.5),
        "a String owner" => forgery(Lease, owner: "1", token: 1, expires_at_ns: 0)
      }
    end

    def test_forged_leases_are_harmless
      forged_leases.each do |label, build|
        assert_forgery_is_harmless(label, build, ->(lease) { Checkpoint.from_parts(last_issued: 5, lease: lease, observed: 0) })
      end
    end

    def test_forged_checkpoints_are_harmless
      good = Lease.new(owner: 1, token: 9, expires_at: 1)
      checkpoints = {
        # rubocop:disable Lint/MissingSuper -- skipping the checked constructor is the point
        "a subclass that skips initialize" => -> { Class.new(Checkpoint) { def initialize(*) = nil }.new },
        # rubocop:enable Lint/MissingSuper
        "a lease never issued" => forgery(Checkpoint, last_issued: 5, lease: good, observed_ns: 0),
        "a negative clock" => forgery(Checkpoint, last_issued: 9, lease: good, observed_ns: -5),
        "a String lease" => forgery(Checkpoint, last_issued: 9, lease: "lease", observed_ns: 0),
        "mark 0" => forgery(Checkpoint, last_issued: 0, lease: nil, observed_ns: 0)
      }
      checkpoints.each do |label, build|
        assert_forgery_is_harmless(label, build, ->(checkpoint) { Authority.restore(checkpoint) })
      end
    end

    # Wording an error runs the caller's #inspect. Whatever that does besides
    # raising a StandardError (exit, throw, Thread#kill) must go on where it
    # was headed, never be swallowed into a TypeError.
    class Exits
      def inspect = exit(3)
    end

    class Throws
      def inspect = throw(:out, :thrown)
    end

    class Sleeps
      def inspect
        sleep 5
        "slept"
      end
    end

    class Raises
      def inspect = raise("boom")
    end

    def test_exit_inside_inspect_exits
      error = assert_raises(SystemExit) { Authority.new.acquire(owner: Exits.new, now: 0, ttl: 1) }
      assert_equal 3, error.status
      assert_raises(SystemExit) { Authority.new(clock_policy: Exits.new) }
      assert_raises(SystemExit) { Holder.new(token: 1, at: 0, cadence: Exits.new) }
      assert_raises(SystemExit) { Authority.restore(Exits.new) }
    end

    def test_throw_inside_inspect_reaches_its_catch
      assert_equal :thrown, catch(:out) { Fence.new.accept(Throws.new) }
      assert_equal :thrown, catch(:out) { Authority.new.acquire(owner: 1, now: Throws.new, ttl: 1) }
      assert_equal :thrown, catch(:out) { Authority.new(clock_policy: Throws.new) }
    end

    def test_a_thread_killed_inside_inspect_dies
      reached = Queue.new
      thread = Thread.new do
        Authority.new.acquire(owner: Sleeps.new, now: 0, ttl: 1)
      rescue TypeError
        reached << :went_on
      end
      sleep 0.01 until thread.status == "sleep"
      thread.kill
      assert thread.join(3), "the killed thread ended"
      assert_empty reached, "the kill was not swallowed into a TypeError"
    end

    def test_an_inspect_that_raises_falls_back_to_the_plain_form
      error = assert_raises(TypeError) { Authority.new.acquire(owner: Raises.new, now: 0, ttl: 1) }
      assert_match(/\Aowner must be an Integer in #{Regexp.escape(OWNER_RANGE)}, got #<[\w:]+Raises:0x\h+> \([\w:]+Raises\)\z/,
                   error.message)
    end
  end
end
