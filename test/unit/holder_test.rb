# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Holder: the rules of SPEC section 4 through the Ruby API (a Cadence on its
  # own: cadence_test.rb).
  class HolderTest < Minitest::Test
    def cadence(ttl: 30, renew_after: 10, warn_before: 5)
      Cadence.new(ttl: ttl, renew_after: renew_after, warn_before: warn_before)
    end

    def holder(token: 1, at: 0, **spans)
      Holder.new(token: token, at: at, cadence: cadence(**spans))
    end

    # The walk-through of SPEC section 3.1.
    def test_the_spec_example
      value = holder

      refute value.renewal_due?(9.0)
      assert value.renewal_due?(10.0)
      assert value.refresh(10.0)
      assert_equal :unconfirmed, value.state
      assert value.confirm(token: 1, at: 11.0)
      assert_equal :confirmed, value.state
      assert value.at_risk?(36.0)
      assert value.expire
      assert value.reacquire(token: 2, at: 40.0)
      assert value.fence
      assert_nil value.warning_deadline
    end

    def test_a_new_holder_is_confirmed_at_its_grant
      value = holder(token: 4, at: 100.5)

      assert_equal :confirmed, value.state
      assert_equal 4, value.token
      assert_equal 100.5, value.confirmed_at
      assert_equal 125.5, value.warning_deadline
      assert_equal cadence, value.cadence
    end

    def test_the_holder_keeps_the_cadence_object_it_was_given
      spans = cadence

      assert_same spans, Holder.new(token: 1, at: 0, cadence: spans).cadence
    end

    def test_renewal_due_when_confirmed_counts_from_the_last_confirmation
      value = holder

      refute value.renewal_due?(9.999)
      assert value.renewal_due?(10)
      assert value.confirm(token: 1, at: 12)
      refute value.renewal_due?(21.5)
      assert value.renewal_due?(22)
    end

    def test_renewal_is_always_due_while_an_attempt_is_outstanding
      unconfirmed = holder
      unconfirmed.refresh(1)

      assert unconfirmed.renewal_due?(0)
      at_risk = holder
      at_risk.refresh(26)

      assert_equal :at_risk, at_risk.state
      assert at_risk.renewal_due?(0)
    end

    def test_renewal_is_never_due_once_expired_or_fenced
      expired = holder
      expired.expire
      fenced = holder
      fenced.fence

      refute expired.renewal_due?(1_000)
      refute fenced.renewal_due?(1_000)
    end

    def test_refresh_is_unconfirmed_before_the_warning_deadline_and_at_risk_from_it
      early = holder

      assert early.refresh(24.999)
      assert_equal :unconfirmed, early.state
      assert early.refresh(25)
      assert_equal :at_risk, early.state
      # At risk stays at risk until confirmed, whatever instant is passed.
      assert early.refresh(1)
      assert_equal :at_risk, early.state
    end

    def test_refresh_is_false_once_expired_or_fenced
      expired = holder
      expired.expire
      fenced = holder
      fenced.fence

      refute expired.refresh(1)
      assert_equal :expired, expired.state
      refute fenced.refresh(1)
      assert_equal :fenced, fenced.state
    end

    def test_confirm_ignores_a_stale_reply
      value = holder(token: 5)
      value.refresh(10)

      refute value.confirm(token: 4, at: 11)
      refute value.confirm(token: 0, at: 11)
      assert_equal :unconfirmed, value.state
      assert_equal 5, value.token
      assert_equal 0.0, value.confirmed_at
    end

    def test_confirm_takes_the_same_or_a_newer_token_and_restarts_the_schedule
      value = holder(token: 5)
      value.refresh(26)

      assert value.confirm(token: 5, at: 26)
      assert_equal :confirmed, value.state
      assert_equal 26.0, value.confirmed_at
      assert_equal 51.0, value.warning_deadline
      assert value.confirm(token: 6, at: 27)
      assert_equal 6, value.token
      assert_equal 27.0, value.confirmed_at
    end

    def test_confirm_is_false_once_expired_or_fenced
      expired = holder
      expired.expire
      fenced = holder
      fenced.fence

      refute expired.confirm(token: 1, at: 1)
      refute expired.confirm(token: 2, at: 1)
      assert_equal :expired, expired.state
      refute fenced.confirm(token: 2, at: 1)
      assert_equal :fenced, fenced.state
    end

    def test_at_risk_past_the_warning_deadline_and_always_once_expired_or_fenced
      value = holder

      refute value.at_risk?(24.999)
      assert value.at_risk?(25)
      expired = holder
      expired.expire

      assert expired.at_risk?(0)
      fenced = holder
      fenced.fence

      assert fenced.at_risk?(0)
    end

    def test_no_warning_deadline_once_expired_or_fenced
      expired = holder
      expired.expire
      fenced = holder
      fenced.fence

      assert_nil expired.warning_deadline
      assert_nil fenced.warning_deadline
    end

    def test_expire_reports_whether_it_changed_the_state
      value = holder

      assert value.expire
      assert_equal :expired, value.state
      refute value.expire
      fenced = holder
      fenced.fence

      refute fenced.expire
      assert_equal :fenced, fenced.state
    end

    def test_only_a_strictly_newer_token_recovers
      value = holder(token: 3)
      value.expire

      refute value.reacquire(token: 3, at: 40)
      refute value.reacquire(token: 2, at: 40)
      refute value.reacquire(token: 0, at: 40)
      assert_equal :expired, value.state
      assert value.reacquire(token: 4, at: 40)
      assert_equal :confirmed, value.state
      assert_equal 4, value.token
      assert_equal 40.0, value.confirmed_at
      assert_equal 65.0, value.warning_deadline
    end

    def test_a_newer_grant_also_replaces_a_live_holding
      value = holder(token: 3)
      value.refresh(26)

      assert value.reacquire(token: 9, at: 27)
      assert_equal :confirmed, value.state
      assert_equal 9, value.token
    end

    def test_fenced_is_terminal_and_idempotent
      value = holder

      assert value.fence
      refute value.fence
      refute value.reacquire(token: 2, at: 1)
      refute value.confirm(token: 2, at: 1)
      refute value.refresh(1)
      refute value.expire
      assert_equal :fenced, value.state
      assert_equal 1, value.token
    end

    def test_a_holder_driven_by_an_authority_and_a_fence
      authority = Authority.new
      fence = Fence.new
      grant = authority.acquire(owner: 7, now: 0, ttl: 30).lease
      value = Holder.new(token: grant.token, at: 0, cadence: cadence)

      assert fence.accept(value.token)
      assert value.refresh(10)
      renewed = authority.renew(owner: 7, token: value.token, now: 10, ttl: 30)

      assert value.confirm(token: renewed.lease.token, at: 10)
      # The worker stalls; the lease lapses and worker 12 takes over.
      successor = authority.acquire(owner: 12, now: 41, ttl: 30).lease

      assert fence.accept(successor.token)
      assert value.at_risk?(41)
      assert value.refresh(41)
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: value.token, now: 41, ttl: 30)
      assert value.expire
      refute fence.accept(value.token)
      assert value.fence
      assert_equal :fenced, value.state
    end

    def test_inspect
      assert_equal "#<LeaseMachines::Holder state=:confirmed token=1 confirmed_at=0.0 warning_deadline=25.0>",
                   holder.inspect
      fenced = holder
      fenced.fence

      assert_equal "#<LeaseMachines::Holder state=:fenced token=1 confirmed_at=0.0 warning_deadline=nil>", fenced.to_s
    end

    # max_hold: renewals end that long after the grant (core/tests/holder.rs has every state).
    def test_renewals_end_max_hold_after_the_grant
      value = Holder.new(token: 1, at: 100, cadence: Cadence.new(ttl: 30, renew_after: 10, warn_before: 5, max_hold: 45))

      assert_equal 145.0, value.renewals_end
      assert value.refresh(140)
      assert value.confirm(token: 1, at: 140)
      assert value.renewal_allowed?(144.999)
      refute value.renewal_allowed?(145)
      refute value.renewal_due?(150)
      refute value.refresh(150)
      assert_equal :confirmed, value.state
      assert_nil holder.renewals_end
      assert holder.renewal_allowed?(1e9)
    end
  end
end
