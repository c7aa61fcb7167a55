# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Decision, Lease, Checkpoint and Cadence are frozen value objects.
  class ValuesTest < Minitest::Test
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

    def test_lease_readers
      value = lease(expires_at: 15.25)

      assert_equal 7, value.owner
      assert_equal 1, value.token
      assert_equal 15_250_000_000, value.expires_at_ns
      assert_equal 15.25, value.expires_at
      assert_kind_of Float, value.expires_at
    end

    def test_lease_expired_is_inclusive_of_the_expiry_instant
      value = lease(expires_at: 15)

      refute value.expired?(14.999999999)
      assert value.expired?(15)
      assert value.expired?(15.0)
      assert value.expired?(16)
    end

    def test_lease_value_semantics
      assert_value_semantics(lease, lease(expires_at: 15.0),
                             lease(owner: 8), lease(token: 2), lease(expires_at: 15.000000001))
    end

    def test_lease_to_h_deconstruct_and_inspect
      value = lease(expires_at: 15.5)

      assert_equal({ owner: 7, token: 1, expires_at: 15.5 }, value.to_h)
      matched = case value
                in { owner: 7, token:, expires_at: } then [token, expires_at]
                end

      assert_equal [1, 15.5], matched
      assert_equal "#<LeaseMachines::Lease owner=7 token=1 expires_at=15.5>", value.inspect
      assert_equal value.inspect, value.to_s
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

    def test_lease_is_frozen_for_good
      assert_stays_frozen(lease)
    end

    def test_decision_readers_and_predicates_for_every_status
      granted = Authority.new.acquire(owner: 7, now: 10, ttl: 5)
      decisions = {
        granted: granted,
        renewed: Decision.new(status: :renewed, lease: granted.lease),
        released: Decision::RELEASED,
        rejected: Decision.rejected(:occupied)
      }
      decisions.each do |status, decision|
        assert_equal status, decision.status
        predicates = %i[granted? renewed? released? rejected?].select { |name| decision.public_send(name) }

        assert_equal [:"#{status}?"], predicates
        assert_predicate decision, :frozen?
      end
    end

    def test_decision_value_semantics
      granted = Authority.new.acquire(owner: 7, now: 10, ttl: 5)
      same = Decision.new(status: :granted, lease: lease)

      assert_value_semantics(granted, same,
                             Decision.new(status: :renewed, lease: lease),
                             Decision.new(status: :granted, lease: lease(token: 2)),
                             Decision::RELEASED, Decision.rejected(:occupied))
      assert_value_semantics(Decision.rejected(:expired), Decision.new(status: :rejected, reason: :expired),
                             Decision.rejected(:not_owner), Decision::RELEASED)
    end

    def test_decision_to_h_and_deconstruct_keys
      granted = Authority.new.acquire(owner: 7, now: 10, ttl: 5)

      assert_equal({ status: :granted, lease: { owner: 7, token: 1, expires_at: 15.0 }, reason: nil }, granted.to_h)
      assert_equal({ status: :released, lease: nil, reason: nil }, Decision::RELEASED.to_h)
      assert_equal({ status: :rejected, lease: nil, reason: :occupied }, Decision.rejected(:occupied).to_h)
      assert_equal({ status: :granted, lease: granted.lease, reason: nil }, granted.deconstruct_keys(nil))
    end

    def test_decisions_match_with_case_in
      outcomes = [
        Authority.new.acquire(owner: 7, now: 10, ttl: 5),
        Decision::RELEASED,
        Decision.rejected(:stale_token)
      ].map do |decision|
        case decision
        in { status: :granted, lease: { token:, owner: } } then "granted #{token} to #{owner}"
        in { status: :rejected, reason: } then "rejected: #{reason}"
        in { status: :released } then "released"
        end
      end

      assert_equal ["granted 1 to 7", "released", "rejected: stale_token"], outcomes
    end

    def test_decision_inspect
      granted = Authority.new.acquire(owner: 7, now: 10, ttl: 5)

      assert_equal "#<LeaseMachines::Decision granted lease=#<LeaseMachines::Lease owner=7 token=1 expires_at=15.0>>",
                   granted.inspect
      assert_equal "#<LeaseMachines::Decision released>", Decision::RELEASED.inspect
      assert_equal "#<LeaseMachines::Decision rejected reason=:tokens_exhausted>", Decision.rejected(:tokens_exhausted).inspect
      assert_equal granted.inspect, granted.to_s
    end

    def test_shared_decisions_are_frozen_and_in_reason_order
      assert_equal %i[granted renewed released rejected], Decision::STATUSES
      assert_equal %i[occupied stale_token not_owner expired clock_regressed invalid_ttl deadline_overflow
                      tokens_exhausted], Decision::REASONS
      assert_predicate Decision::REJECTIONS, :frozen?
      assert_predicate Decision::REASONS, :frozen?
      assert_predicate Decision::STATUSES, :frozen?
      assert_equal Decision::REASONS, Decision::REJECTIONS.map(&:reason)
      Decision::REASONS.each_with_index do |reason, index|
        assert_same Decision::REJECTIONS[index], Decision.rejected(reason)
        assert_predicate Decision.rejected(reason), :frozen?
      end
      assert_predicate Decision::RELEASED, :frozen?
    end

    def test_decision_new_checks_its_shape
      assert_error(TypeError, /\Alease must be a LeaseMachines::Lease for :granted, got nil\z/) do
        Decision.new(status: :granted)
      end
      assert_error(ArgumentError, "reason must be nil for :renewed, got :occupied") do
        Decision.new(status: :renewed, lease: lease, reason: :occupied)
      end
      assert_error(ArgumentError, "a :released decision has no lease and no reason") do
        Decision.new(status: :released, lease: lease)
      end
      assert_error(ArgumentError, /\Areason must be one of :occupied, .*:tokens_exhausted, got nil\z/) do
        Decision.new(status: :rejected)
      end
      assert_error(ArgumentError, /\Alease must be nil for :rejected, got #<LeaseMachines::Lease/) do
        Decision.new(status: :rejected, lease: lease, reason: :occupied)
      end
    end

    def test_decisions_are_frozen_for_good
      assert_stays_frozen(Authority.new.acquire(owner: 7, now: 10, ttl: 5))
      assert_stays_frozen(Decision::RELEASED)
      assert_stays_frozen(Decision.rejected(:expired))
    end

    def test_checkpoint_value_semantics
      make = ->(mark, value, observed) { Checkpoint.from_parts(last_issued: mark, lease: value, observed: observed) }
      checkpoint = make.call(3, lease(token: 3), 2.5)

      assert_value_semantics(checkpoint, make.call(3, lease(token: 3, expires_at: 15.0), 2.5),
                             make.call(4, lease(token: 3), 2.5), make.call(3, nil, 2.5),
                             make.call(3, lease(token: 2), 2.5), make.call(3, lease(token: 3), 2.500000001))
    end

    def test_checkpoint_to_h_deconstruct_and_inspect
      checkpoint = Checkpoint.from_parts(last_issued: 3, lease: lease(token: 3), observed: 2.5)

      assert_equal({ last_issued: 3, lease: { owner: 7, token: 3, expires_at: 15.0 }, observed: 2.5 }, checkpoint.to_h)
      case checkpoint
      in { last_issued: Integer => mark, lease: Lease => value, observed: Float => observed }
        assert_equal [3, lease(token: 3), 2.5], [mark, value, observed]
      end
      assert_equal "#<LeaseMachines::Checkpoint last_issued=3 " \
                   "lease=#<LeaseMachines::Lease owner=7 token=3 expires_at=15.0> observed=2.5>", checkpoint.inspect
      assert_equal "#<LeaseMachines::Checkpoint last_issued=nil lease=nil observed=0.0>", Authority.new.checkpoint.to_s
    end

    def test_checkpoints_and_their_leases_are_frozen_for_good
      checkpoint = granted_authority.checkpoint

      assert_stays_frozen(checkpoint)
      assert_stays_frozen(checkpoint.lease)
      assert_stays_frozen(Cadence.new(ttl: 30, renew_after: 10, warn_before: 5))
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
      assert_equal({ ttl: 30.0, renew_after: 10.0, warn_before: 5.5 }, cadence.to_h)
      case cadence
      in { ttl:, warn_before: }
        assert_equal [30.0, 5.5], [ttl, warn_before]
      end
      assert_equal "#<LeaseMachines::Cadence ttl=30.0 renew_after=10.0 warn_before=5.5>", cadence.inspect
    end

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
