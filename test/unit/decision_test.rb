# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"

module LeaseMachines
  # Decision: a frozen value object, and the shared decisions.
  class DecisionTest < Minitest::Test
    include ValueAssertions

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
  end
end
