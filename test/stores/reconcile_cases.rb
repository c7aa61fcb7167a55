# frozen_string_literal: true

require "lease_machines/fences/sqlite"

module LeaseMachines
  # store.reconcile(fences) on one engine (the including class gives
  # `reconcile_store` and `reconcile_fences`, a fence in the store's own
  # database). A grant the store lost is played by a guard that shows a
  # token the store never issued (an unbound fence admits any token), as a
  # fence would have seen the lost grant's writes; test/stores/
  # postgres_failover_token_test.rb loses one in a real failover.
  module ReconcileCases
    def setup
      super
      @store = reconcile_store
      @fences = reconcile_fences
    end

    def teardown
      @fences&.close
      @store&.close
      super
    end

    def test_the_counter_rises_to_the_mark_and_the_next_grant_is_above_it
      name = unique_name("reconcile")
      authority = @store.authority(name)
      stale = authority.acquire(owner: 1, ttl: 60).lease # the promoted replica's grant, below what the fence saw
      guard(name, stale.token + 4, owner: 7) # the lost grant's write

      report = reconciled(name)
      assert_equal [stale.token + 4, 7, stale.token, stale.token + 4], report.to_h.values_at(:mark, :mark_owner,
                                                                                             :last_issued_before,
                                                                                             :last_issued)
      assert_equal stale, report.voided, "the fence refuses its token: the lease is cleared"
      assert_predicate report, :raised?
      assert_nil authority.checkpoint.lease
      assert_equal :stale_token, authority.renew(owner: 1, token: stale.token, ttl: 60).reason,
                   "its holder learns it at its next renewal"
      assert_equal stale.token + 5, authority.acquire(owner: 2, ttl: 60).lease.token
    end

    def test_a_resource_the_store_lost_entirely_gets_a_row_at_the_mark
      name = unique_name("reconcile")
      guard(name, 12)
      report = reconciled(name)
      assert_equal [12, nil, nil, 12, nil], report.to_h.values_at(:mark, :mark_owner, :last_issued_before,
                                                                  :last_issued, :voided)
      assert_equal 12, @store.status(name).last_issued
      assert_equal 13, @store.authority(name).acquire(owner: 2, ttl: 60).lease.token
    end

    def test_a_reissued_lease_is_cleared_and_the_first_holders_own_is_kept
      reissued = unique_name("reconcile")
      token = @store.authority(reissued).acquire(owner: 12, ttl: 60).lease.token # 1 again, to owner 12
      guard(reissued, token, owner: 7) # owner 7 wrote with 1 before the failover
      kept = unique_name("reconcile")
      lease = @store.authority(kept).acquire(owner: 7, ttl: 60, label: "web-1 pid 7").lease
      guard(kept, lease.token, owner: 7)

      assert_equal token, reconciled(reissued).last_issued
      refute_predicate reconciled(reissued), :raised?
      assert_nil @store.authority(reissued).checkpoint.lease, "the second grant of token #{token} is void"
      assert_equal token + 1, @store.authority(reissued).acquire(owner: 3, ttl: 60).lease.token

      refute_predicate reconciled(kept), :changed?
      assert_equal lease, @store.authority(kept).checkpoint.lease
      assert_equal "web-1 pid 7", @store.status(kept).label, "a lease kept keeps its holder's label"
      assert_predicate @store.authority(kept).renew(owner: 7, token: lease.token, ttl: 60), :renewed?
    end

    def test_it_never_lowers_a_counter_and_running_it_again_changes_nothing
      ahead = unique_name("reconcile")
      authority = @store.authority(ahead)
      3.times { authority.release(owner: 1, token: authority.acquire(owner: 1, ttl: 60).lease.token) }
      guard(ahead, 2)
      behind = unique_name("reconcile")
      guard(behind, 40)

      first = @store.reconcile(@fences).to_h { |report| [report.name, report] }
      assert_equal [3, 3], first.fetch(ahead).to_h.values_at(:last_issued_before, :last_issued)
      assert_equal [nil, 40], first.fetch(behind).to_h.values_at(:last_issued_before, :last_issued)
      before = [ahead, behind].map { |name| @store.status(name).checkpoint }
      again = @store.reconcile(@fences)
      assert_empty again.select(&:changed?)
      assert_equal(before, [ahead, behind].map { |name| @store.status(name).checkpoint })
    end

    def test_the_fences_may_be_in_another_database
      Dir.mktmpdir do |dir|
        elsewhere = Fences::SQLite.new(File.join(dir, "app.sqlite3")).setup!
        name = unique_name("reconcile")
        elsewhere.guard(name, 9, owner: 4) { nil }
        report = @store.reconcile(elsewhere).find { |each| each.name == name }
        assert_equal 9, report.last_issued
        assert_equal 10, @store.authority(name).acquire(owner: 2, ttl: 60).lease.token
      ensure
        elsewhere&.close
      end
    end

    def test_anything_but_a_fence_is_a_type_error
      error = assert_raises(TypeError) { @store.reconcile("sqlite:app.sqlite3") }
      assert_equal "fences must be a fence (LeaseMachines::Fences::SQLite, Fences::Postgres or Fences::MySQL), " \
                   'got "sqlite:app.sqlite3" (String)', error.message
    end

    private

    def guard(name, token, owner: nil)
      @fences.guard(name, token, owner: owner) { nil }
    end

    def reconciled(name)
      @store.reconcile(@fences).find { |report| report.name == name }
    end
  end
end
