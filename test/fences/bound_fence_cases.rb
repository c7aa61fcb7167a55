# frozen_string_literal: true

require_relative "fence_helper"
require "active_record"

module LeaseMachines
  # A fence bound to the lease store in its own database (`store: true`):
  # the mark's one conditional statement also requires the token to be one
  # the store issued for the resource (`token <= last_issued` of the store's
  # row), and with `strict: true` the token of the lease the store records,
  # live at the database clock. Real stores (LeaseMachines::Stores::SQLite,
  # Stores::Postgres) in the same database as the fence, real databases.
  #
  # An including class provides `new_fences(**options)`, `store`,
  # `write(conn, name, body)` and `write_store_row(name, last_issued)` (a row
  # written by hand, to set up extreme values), and an engine's data module.
  module BoundFenceCases
    include FenceTestHelper

    MAX = (2**64) - 1

    def teardown
      @bound&.close
      @strict&.close
      @store&.close
      super
    end

    def bound
      @bound ||= new_fences(store: true)
    end

    def strict
      @strict ||= new_fences(store: true, strict: true)
    end

    def now_s
      Process.clock_gettime(Process::CLOCK_REALTIME).floor
    end

    def acquire(name, owner: 7, ttl: 30, now: now_s)
      decision = store.authority(name).acquire(owner: owner, ttl: ttl, now: now)
      assert_predicate decision, :granted?
      decision.lease.token
    end

    def assert_refused(error_class, fences, resource, token, owner: nil)
      before_rows = fence_rows(resource)
      before_mark = committed_mark_text(resource)
      before_body = committed_body(resource)
      error = assert_raises(error_class) do
        fences.guard(resource, token, owner: owner) { |conn| write(conn, resource, "written with #{token}") }
      end
      assert_kind_of FencedError, error
      assert_equal [resource, token], [error.resource, error.token]
      assert_includes error.message, resource.inspect
      assert_includes error.message, "token #{token}"
      assert_equal [before_rows, before_mark, before_body],
                   [fence_rows(resource), committed_mark_text(resource), committed_body(resource)],
                   "a refused token writes nothing"
      error
    end

    def test_an_issued_token_passes_and_raises_the_mark
      name = unique_name("reports/nightly")
      token = acquire(name)
      assert_equal :done, bound.guard(name, token) { |conn| write(conn, name, "by #{token}") && :done }
      assert_equal "by #{token}", committed_body(name)
      assert_equal token, bound.highest(name)
      bound.guard(name, token) { |conn| write(conn, name, "again by #{token}") }
      assert_equal "again by #{token}", committed_body(name), "equal tokens pass: one lease, many writes"
    end

    def test_a_token_the_store_never_issued_is_refused_and_nothing_is_written
      name = unique_name
      token = acquire(name)
      [token + 1, MAX].each do |bogus|
        error = assert_refused(UnknownTokenError, bound, name, bogus)
        assert_equal [token, nil], [error.last_issued, error.highest]
        assert_includes error.message, "the store never issued it (the store has issued up to #{token})"
        assert_equal 0, fence_rows(name), "not even a row for a resource never guarded"
      end

      bound.guard(name, token) { |conn| write(conn, name, "by the holder") }
      error = assert_refused(UnknownTokenError, bound, name, MAX)
      assert_equal token, error.highest
      assert_equal stored_text(token), committed_mark_text(name), "the mark did not move: the fence is not bricked"
      bound.guard(name, token) { |conn| write(conn, name, "still by the holder") }
      assert_equal "still by the holder", committed_body(name)
      next_token = acquire(name, owner: 8, now: now_s + 60)
      bound.guard(name, next_token) { |conn| write(conn, name, "by the next holder") }
      assert_equal next_token, bound.highest(name)
    end

    def test_a_resource_the_store_has_no_row_for_refuses_every_token
      store # the store's table, without a row for the resource
      name = unique_name
      [1, 2**63, MAX].each do |bogus|
        error = assert_refused(UnknownTokenError, bound, name, bogus)
        assert_nil error.last_issued
        assert_includes error.message, "the store has issued no token for it"
      end
      assert_equal 0, fence_rows(name)
    end

    def test_an_unbound_fence_on_the_same_database_is_bricked_by_a_bogus_token
      name = unique_name
      token = acquire(name)
      unbound = new_fences
      unbound.guard(name, MAX) { |conn| write(conn, name, "by a forged token") }
      assert_fenced(name, token, MAX) { unbound.guard(name, token) { flunk "ran" } }
    ensure
      unbound&.close
    end

    def test_an_issued_token_below_the_mark_is_stale_not_unknown
      name = unique_name
      old = acquire(name, owner: 1, ttl: 5, now: now_s - 100)
      current = acquire(name, owner: 2)
      bound.guard(name, current) { |conn| write(conn, name, "by the current holder") }
      error = assert_refused(FencedError, bound, name, old)
      assert_instance_of FencedError, error
      assert_equal current, error.highest
    end

    def test_without_strict_the_token_of_an_expired_lease_still_passes
      name = unique_name
      token = acquire(name, ttl: 1, now: now_s - 100)
      bound.guard(name, token) { |conn| write(conn, name, "late, but no newer token exists") }
      assert_equal token, bound.highest(name)
    end

    def test_the_extremes_compare_exactly
      [(2**63) - 1, 2**63, MAX].each do |last_issued|
        name = unique_name("extreme")
        write_store_row(name, last_issued)
        # Shorter decimal texts (and 20 digits below a 19-digit mark) are the
        # cases a plain text comparison gets wrong.
        [9, 10**18, last_issued - 1, last_issued].each do |token|
          bound.guard(name, token) { |conn| write(conn, name, "by #{token}") }
          assert_equal token, bound.highest(name), "#{token} <= #{last_issued}"
        end
        ([last_issued + 1, 10**19, MAX].uniq.select { |t| t > last_issued && t <= MAX }).each do |bogus|
          error = assert_refused(UnknownTokenError, bound, name, bogus)
          assert_equal last_issued, error.last_issued
        end
        assert_equal stored_text(last_issued), committed_mark_text(name)
      end
    end

    def test_strict_admits_the_token_of_a_live_lease
      name = unique_name
      token = acquire(name, ttl: 30)
      strict.guard(name, token) { |conn| write(conn, name, "by the live holder") }
      assert_equal "by the live holder", committed_body(name)
      assert_equal token, strict.highest(name)
    end

    # A failover lost the grant of `token` to owner 3, and the promoted
    # store issued it again, to owner 7: the first holder, writing before the
    # second, meets a live lease of its token that is not its own.
    def test_strict_refuses_the_token_of_a_live_lease_shown_by_another_owner
      name = unique_name
      token = acquire(name, owner: 7, ttl: 30)
      error = assert_refused(ReissuedTokenError, strict, name, token, owner: 3)
      assert_equal [3, 7], [error.owner, error.recorded_owner]
      assert_includes error.message, "live lease"
      strict.guard(name, token, owner: 7) { |conn| write(conn, name, "by the holder") }
      assert_equal "by the holder", committed_body(name), "the lease's own owner writes"
    end

    def test_strict_refuses_an_expired_lease_before_any_newer_token_exists
      name = unique_name
      t0 = now_s
      token = acquire(name, ttl: 1, now: t0 - 100)
      bound.guard(name, token) { |conn| write(conn, name, "by the holder, unstrict") }
      error = assert_refused(ExpiredTokenError, strict, name, token)
      assert_equal [token, token, token], [error.last_issued, error.lease_token, error.highest]
      assert_equal (t0 - 99) * 1_000_000_000, error.expires_at_ns
      assert_operator error.clock_ns, :>, error.expires_at_ns
      assert_includes error.message, "its lease expired at #{error.expires_at_ns} ns"
    end

    def test_strict_refuses_a_lease_that_ran_out_in_real_time
      name = unique_name
      decision = store.authority(name).acquire(owner: 7, ttl: 0.2)
      token = decision.lease.token
      strict.guard(name, token) { |conn| write(conn, name, "while live") }
      sleep 0.35
      assert_refused(ExpiredTokenError, strict, name, token)
      assert_equal "while live", committed_body(name)
    end

    def test_strict_refuses_the_token_of_a_released_lease
      name = unique_name
      t0 = now_s
      token = acquire(name, now: t0)
      strict.guard(name, token) { |conn| write(conn, name, "while held") }
      assert_predicate store.authority(name).release(owner: 7, token: token, now: t0 + 1), :released?
      error = assert_refused(ExpiredTokenError, strict, name, token)
      assert_nil error.lease_token
      assert_includes error.message, "its lease is no longer held (released)"
    end

    def test_strict_refuses_a_replaced_lease_before_its_successor_writes
      name = unique_name
      old = acquire(name, owner: 1, ttl: 5, now: now_s - 100)
      current = acquire(name, owner: 2)
      error = assert_refused(ExpiredTokenError, strict, name, old)
      assert_equal current, error.lease_token
      assert_includes error.message, "replaced by the lease of token #{current}"
    end

    def test_strict_refuses_a_token_never_issued_as_unknown
      name = unique_name
      token = acquire(name)
      assert_refused(UnknownTokenError, strict, name, token + 1)
      assert_refused(UnknownTokenError, strict, name, MAX)
    end

    def test_token_0_is_refused_as_by_any_fence
      name = unique_name
      acquire(name)
      assert_fenced(name, 0, nil) { strict.guard(name, 0) { flunk "ran" } }
      assert_equal 0, fence_rows(name)
    end

    def test_a_missing_store_table_says_how_to_create_it
      drop_store_table
      error = assert_raises(StoreError) { bound.guard(unique_name, 1) { flunk "ran" } }
      assert_includes error.message, "lease_machines_resources"
      assert_includes error.message, "a fence bound to its store (store: true) needs the store's table in its " \
                                     "database: create it with the store's setup!"
    end

    def test_the_options_are_checked
      ill_typed!
      error = assert_raises(ArgumentError) { new_fences(strict: true) }
      assert_match(/strict: true needs store: true/, error.message)
      [nil, 1, "true"].each do |bad|
        assert_raises(TypeError) { new_fences(store: bad) }
        assert_raises(TypeError) { new_fences(store: true, strict: bad) }
      end
    end
  end

  # For fences on a driver connection the test owns: a guard inside the
  # caller's transaction joins it under a savepoint.
  module BoundJoiningCases
    def test_a_refusal_inside_your_transaction_writes_nothing_and_leaves_it_usable
      name = unique_name
      token = acquire(name)
      fences = bound
      driver_begin(@conn)
      driver_write(@conn, name, "the caller's own write")
      error = assert_raises(UnknownTokenError) { fences.guard(name, BoundFenceCases::MAX) { flunk "ran" } }
      assert_equal token, error.last_issued
      fences.guard(name, token) { |conn| driver_write(conn, "#{name}-guarded", "guarded") }
      case engine
      when :sqlite then @conn.execute("COMMIT")
      when :postgres then @conn.exec("COMMIT")
      when :mysql then @conn.query("COMMIT")
      end
      assert_equal ["the caller's own write", "guarded"], [committed_body(name), committed_body("#{name}-guarded")]
      assert_equal stored_text(token), committed_mark_text(name)
    end
  end
end
