# frozen_string_literal: true

require "test_helper"
require "support/entry_points"

module LeaseMachines
  # Arguments of the wrong type, at every entry point: TypeError, never a
  # silent conversion (2.9 is not owner 2), and a message naming the argument,
  # the value and its class. Unknown and missing keywords, and bad clock
  # policies, raise ArgumentError. Every call that raises changes nothing.
  #
  # These calls break the RBS signatures on purpose, so `rake rbs:test` leaves
  # this file out (see rakelib/rbs.rake).
  class ArgumentTypesTest < Minitest::Test
    # Not Integers, and refused even though most of them convert to one with
    # to_int/to_i: owners and tokens are never truncated or parsed.
    NOT_INTEGERS = [2.9, 2.0, 0.0, -1.5, Float::NAN, "1", "", :one, 1r, Complex(1, 0), [], [1], {}, true].freeze
    # Not Integer or Float seconds.
    NOT_SECONDS = ["1", "1.5", "", nil, :now, 1r, (3 / 2r), Complex(1, 0), [], [1.0], {}, true, false, Object.new,
                   Time.at(0)].freeze

    # Answers 1 to every conversion: a wrapper that coerces would take it, a
    # strict one refuses it.
    class Convertible
      def to_int = 1
      def to_i = 1
      def to_f = 1.0
      def to_r = 1r
      def coerce(other) = [other, 1]
      def inspect = "#<Convertible>"
    end
    CONVERTIBLE = Convertible.new

    def shown(value) = "#{value.inspect} (#{value.class})"

    def test_a_float_owner_is_a_type_error_not_a_truncation
      authority = granted_authority(owner: 2, now: 10, ttl: 5)

      assert_raises_unchanged(authority, TypeError, "owner must be an Integer in #{OWNER_RANGE}, got 2.9 (Float)") do
        authority.renew(owner: 2.9, token: 1, now: 11, ttl: 5)
      end
      assert_raises_unchanged(authority, TypeError, "token must be an Integer in #{OWNER_RANGE}, got 1.0 (Float)") do
        authority.renew(owner: 2, token: 1.0, now: 11, ttl: 5)
      end
    end

    def test_owners_and_presented_tokens_must_be_integers
      pairs(EntryPoints.of_kind(:owner, :presented), NOT_INTEGERS + [nil, CONVERTIBLE]).each do |slot, value|
        assert_refused(slot, value, TypeError, "#{slot.name} must be an Integer in #{OWNER_RANGE}, got #{shown(value)}")
      end
    end

    def test_issued_tokens_must_be_integers
      pairs(EntryPoints.of_kind(:issued), NOT_INTEGERS + [nil, CONVERTIBLE]).each do |slot, value|
        assert_refused(slot, value, TypeError, "#{slot.name} must be an Integer in #{TOKEN_RANGE}, got #{shown(value)}")
      end
    end

    def test_optional_marks_must_be_nil_or_integers
      pairs(EntryPoints.of_kind(:optional), NOT_INTEGERS + [CONVERTIBLE]).each do |slot, value|
        assert_refused(slot, value, TypeError, "#{slot.name} must be nil or an Integer in #{TOKEN_RANGE}, got #{shown(value)}")
      end
    end

    def test_times_must_be_integer_or_float_seconds
      pairs(EntryPoints.of_kind(:time), NOT_SECONDS + [CONVERTIBLE]).each do |slot, value|
        assert_refused(slot, value, TypeError, "#{slot.name} must be an Integer or Float (seconds), got #{shown(value)}")
      end
    end

    def test_exact_instants_must_be_integer_nanoseconds
      pairs(EntryPoints.of_kind(:nanos), NOT_INTEGERS + [nil, CONVERTIBLE]).each do |slot, value|
        assert_refused(slot, value, TypeError, "#{slot.name} must be a non-negative Integer (nanoseconds), got #{shown(value)}")
      end
    end

    # The class shown is the object's class, not the singleton class that a
    # singleton method (a stub, a mock) gives it.
    # Kernel#class, not the object's own `class` method, names the class.
    def test_the_class_shown_in_a_message_is_not_the_one_an_object_claims
      liar = Object.new
      def liar.class = Integer
      def liar.inspect = "#<liar>"

      error = assert_raises(TypeError) { Authority.new.acquire(owner: liar, now: 0, ttl: 1) }
      assert_equal "owner must be an Integer in 0..18446744073709551615, got #<liar> (Object)", error.message
    end

    def test_the_message_shows_the_class_of_an_object_with_singleton_methods
      stub = Object.new
      def stub.inspect = "#<stub>"
      def stub.to_int = 1

      assert_error(TypeError, "owner must be an Integer in #{OWNER_RANGE}, got #<stub> (Object)") do
        Authority.new.acquire(owner: stub, now: 0, ttl: 1)
      end
      assert_error(TypeError, "now must be an Integer or Float (seconds), got #<stub> (Object)") do
        Authority.new.acquire(owner: 1, now: stub, ttl: 1)
      end
    end

    def test_clock_policy_must_be_reject_or_clamp
      checkpoint = granted_authority.checkpoint
      [:strict, "reject", "clamp", nil, 0, :Reject, [:reject], Object.new, :"clamp\x00anything", :"reject\x00"].each do |policy|
        message = "clock_policy must be :reject or :clamp, got #{policy.inspect}"

        assert_error(ArgumentError, message) { Authority.new(clock_policy: policy) }
        assert_error(ArgumentError, message) { Authority.restore(checkpoint, clock_policy: policy) }
      end
    end

    def test_restore_needs_a_checkpoint
      [nil, {}, granted_authority, granted_authority.checkpoint.to_h, Checkpoint].each do |value|
        assert_error(TypeError, "checkpoint must be a LeaseMachines::Checkpoint, got #{value.inspect}") do
          Authority.restore(value)
        end
      end
    end

    def test_a_checkpoint_lease_must_be_a_lease
      lease = Lease.new(owner: 7, token: 1, expires_at: 15)
      [lease.to_h, Decision.new(status: :granted, lease: lease), 1, "lease", Lease].each do |value|
        assert_error(TypeError, "lease must be a LeaseMachines::Lease, got #{value.inspect}") do
          Checkpoint.from_parts(last_issued: 1, lease: value, observed: 0)
        end
      end
    end

    def test_a_holder_needs_a_cadence
      [nil, { ttl: 30, renew_after: 10, warn_before: 5 }, 30, Cadence].each do |value|
        assert_error(TypeError, "cadence must be a LeaseMachines::Cadence, got #{value.inspect}") do
          Holder.new(token: 1, at: 0, cadence: value)
        end
      end
    end

    def test_decision_new_and_rejected_need_known_symbols
      assert_error(ArgumentError, "status must be one of :granted, :renewed, :released, :rejected, got :accepted") do
        Decision.new(status: :accepted)
      end
      assert_error(ArgumentError, /\Astatus must be one of .*, got "granted"\z/) { Decision.new(status: "granted") }
      reasons = Decision::REASONS.map(&:inspect).join(", ")

      assert_error(ArgumentError, "reason must be one of #{reasons}, got :busy") { Decision.rejected(:busy) }
      assert_error(ArgumentError, "reason must be one of #{reasons}, got \"occupied\"") { Decision.rejected("occupied") }
      assert_error(ArgumentError, "reason must be one of #{reasons}, got :busy") do
        Decision.new(status: :rejected, reason: :busy)
      end
      assert_error(TypeError, /\Alease must be a LeaseMachines::Lease for :renewed, got \{/) do
        Decision.new(status: :renewed, lease: { owner: 1, token: 1, expires_at: 1.0 })
      end
    end

    def test_unknown_missing_and_positional_arguments
      authority = granted_authority
      cases = keyword_cases(authority)
      thinned_under_stress(cases.to_a).each do |label, call|
        assert_raises_unchanged(authority, ArgumentError, nil) { call.call }
      rescue Minitest::Assertion => e
        raise e.class, "#{label}: #{e.message}"
      end
      assert_operator cases.size, :>=, 30
    end

    def test_keyword_error_messages_name_the_keyword
      authority = granted_authority

      assert_error(ArgumentError, "unknown keyword: :owner_id") { authority.acquire(owner_id: 1, owner: 1, now: 20, ttl: 1) }
      assert_error(ArgumentError, "missing keyword: :ttl") { authority.acquire(owner: 1, now: 20) }
      assert_error(ArgumentError, /missing keywords?: :owner, :token/) { authority.release(now: 20) }
      assert_error(ArgumentError, /\Awrong number of arguments \(given 3, expected 0/) { authority.acquire(1, 20, 5) }
      assert_error(ArgumentError, "unknown keyword: :policy") { Authority.new(policy: :clamp) }
    end

    private

    # Each entry point called with an extra keyword, without each of its
    # keywords in turn, and with positional arguments.
    def keyword_cases(authority)
      lease = Lease.new(owner: 7, token: 1, expires_at: 15)
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      holder = Holder.new(token: 1, at: 0, cadence: cadence)
      entry_points = {
        "Authority#acquire" => [->(**kw) { authority.acquire(**kw) }, { owner: 8, now: 20, ttl: 5 }],
        "Authority#reacquire" => [->(**kw) { authority.reacquire(**kw) }, { owner: 7, now: 11, ttl: 5 }],
        "Authority#renew" => [->(**kw) { authority.renew(**kw) }, { owner: 7, token: 1, now: 11, ttl: 5 }],
        "Authority#release" => [->(**kw) { authority.release(**kw) }, { owner: 7, token: 1, now: 11 }],
        "Lease.new" => [->(**kw) { Lease.new(**kw) }, { owner: 1, token: 1, expires_at: 1 }],
        "Checkpoint.from_parts" => [->(**kw) { Checkpoint.from_parts(**kw) }, { last_issued: 1, lease: lease, observed: 0 }],
        "Cadence.new" => [->(**kw) { Cadence.new(**kw) }, { ttl: 30, renew_after: 10, warn_before: 5 }],
        "Holder.new" => [->(**kw) { Holder.new(**kw) }, { token: 1, at: 0, cadence: cadence }],
        "Holder#confirm" => [->(**kw) { holder.confirm(**kw) }, { token: 1, at: 1 }],
        "Holder#reacquire" => [->(**kw) { holder.reacquire(**kw) }, { token: 2, at: 1 }],
        "Decision.new" => [->(**kw) { Decision.new(**kw) }, { status: :released }]
      }
      cases = {}
      entry_points.each do |name, (call, keywords)|
        cases["#{name} bogus:"] = -> { call.call(**keywords, bogus: 1) }
        keywords.each_key do |key|
          next if name == "Decision.new" # status is its only required keyword; lease and reason are optional

          cases["#{name} without #{key}:"] = -> { call.call(**keywords.except(key)) }
        end
      end
      cases["Decision.new without status:"] = -> { Decision.new }
      cases["Authority#acquire positional"] = -> { authority.acquire(8, 20, 5) }
      cases["Authority#renew hash"] = -> { authority.renew({ owner: 7, token: 1, now: 11, ttl: 5 }) }
      cases["Fence.new positional"] = -> { Fence.new(3) }
      cases["Fence#accept nothing"] = -> { Fence.new.accept }
      cases["Holder#refresh nothing"] = -> { holder.refresh }
      cases["Authority.new positional"] = -> { Authority.new(:clamp) }
      cases["Authority.restore nothing"] = -> { Authority.restore }
      cases
    end
  end
end
