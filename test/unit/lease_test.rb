# frozen_string_literal: true

require "test_helper"
require "support/value_assertions"

module LeaseMachines
  # Lease: a frozen value object.
  class LeaseTest < Minitest::Test
    include ValueAssertions

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

    def test_lease_is_frozen_for_good
      assert_stays_frozen(lease)
    end
  end
end
