# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # The lease store and the fenced data in different databases: the token is
  # the only link between them. The store issues increasing tokens for one
  # history and commits each grant before anyone sees it; the fence compares
  # tokens in the data's own database, in the data's own transaction, and
  # needs nothing from the store to do it (docs/FENCES.md, "Where the fence
  # lives"). Real stores, real databases.
  module CrossDatabaseCases
    include FenceTestHelper

    def test_a_stalled_holder_is_refused_by_a_fence_in_another_database
      name = unique_name("reports/nightly")
      authority = store.authority(name)
      t0 = Process.clock_gettime(Process::CLOCK_REALTIME).floor

      seven = authority.acquire(owner: 7, ttl: 30, now: t0).lease
      data_fences.guard(name, seven.token) { |conn| write(conn, name, "draft by worker 7") }
      # Worker 7 stalls past its TTL; worker 12 takes the lease and writes.
      assert_equal :occupied, authority.acquire(owner: 12, ttl: 30, now: t0 + 20).reason
      twelve = authority.acquire(owner: 12, ttl: 30, now: t0 + 31).lease
      assert_operator twelve.token, :>, seven.token
      data_fences.guard(name, twelve.token) { |conn| write(conn, name, "report by worker 12") }

      # Worker 7 wakes: its renewal is refused by the store, its write by the
      # fence, each in its own database.
      assert_equal :stale_token, authority.renew(owner: 7, token: seven.token, ttl: 30, now: t0 + 45).reason
      assert_fenced(name, seven.token, twelve.token) do
        data_fences.guard(name, seven.token) { |conn| write(conn, name, "stale draft by worker 7") }
      end
      assert_equal "report by worker 12", committed_body(name)
      assert_equal twelve.token, data_fences.highest(name)
    end

    def test_the_fence_needs_no_connection_to_the_store
      name = unique_name
      authority = store.authority(name)
      t0 = Process.clock_gettime(Process::CLOCK_REALTIME).floor
      old = authority.acquire(owner: 1, ttl: 5, now: t0).lease.token
      current = authority.acquire(owner: 2, ttl: 5, now: t0 + 10).lease.token
      data_fences.guard(name, current) { |conn| write(conn, name, "by the current holder") }
      lose_the_store

      assert_fenced(name, old, current) { data_fences.guard(name, old) { |conn| write(conn, name, "stale") } }
      data_fences.guard(name, current) { |conn| write(conn, name, "again by the current holder") }
      assert_equal "again by the current holder", committed_body(name)
    end

    def test_a_release_keeps_the_store_mark_so_the_next_grant_passes_the_fence
      name = unique_name
      authority = store.authority(name)
      t0 = Process.clock_gettime(Process::CLOCK_REALTIME).floor
      first = authority.acquire(owner: 7, ttl: 30, now: t0).lease
      data_fences.guard(name, first.token) { |conn| write(conn, name, "by 7") }
      assert_predicate authority.release(owner: 7, token: first.token, now: t0 + 1), :released?

      second = authority.acquire(owner: 7, ttl: 30, now: t0 + 2).lease
      data_fences.guard(name, second.token) { |conn| write(conn, name, "by 7 again, new token") }
      assert_fenced(name, first.token, second.token) { data_fences.guard(name, first.token) { flunk "ran" } }
    end
  end
end
