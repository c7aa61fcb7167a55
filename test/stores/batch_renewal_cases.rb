# frozen_string_literal: true

module LeaseMachines
  # Store#renew_all, on every engine (StoreContractInProcess includes it):
  # one transaction, each renewal decided as a single renew, answers in
  # order, all or nothing.
  module BatchRenewalCases
    # Counts the store's transactions (each one BEGIN ... COMMIT).
    module CountedTransactions
      attr_reader :transactions

      def transaction(...)
        @transactions = (@transactions || 0) + 1
        super
      end
    end

    def test_renew_all_answers_each_renewal_in_order_in_one_transaction
      store = new_store
      names = %w[c a b].map { |suffix| unique_name("batch-#{suffix}") }
      leases = names.each_with_index.map { |name, index| store.authority(name).acquire(owner: 10 + index, ttl: 30).lease }
      store.singleton_class.prepend(CountedTransactions)

      decisions = store.renew_all(renewals(names, leases, ttl: 60))

      assert_equal 1, store.transactions, "one transaction (one COMMIT) for the batch"
      assert_equal %i[renewed] * 3, decisions.map(&:status)
      assert_equal leases.map(&:token), decisions.map(&:lease).map(&:token)
      assert_equal leases.map(&:owner), decisions.map(&:lease).map(&:owner)
      names.zip(decisions) do |name, decision|
        assert_equal decision.lease, store.authority(name).checkpoint.lease, "#{name}: the renewal was committed"
        assert_operator decision.lease.expires_at_ns, :>, leases[names.index(name)].expires_at_ns
      end
      assert_equal [], store.renew_all([])
    end

    # The same lease twice in one batch: decided one after the other, the
    # second on the row the first wrote; what is committed is the second's.
    def test_a_name_twice_in_a_batch_is_decided_in_order
      store = new_store
      name = unique_name("batch-twice")
      lease = store.authority(name).acquire(owner: 1, ttl: 30).lease
      first, second = store.renew_all([{ name: name, owner: 1, token: lease.token, ttl: 30 },
                                       { name: name, owner: 1, token: lease.token, ttl: 60 }])
      assert_equal %i[renewed renewed], [first.status, second.status]
      assert_operator second.lease.expires_at_ns, :>, first.lease.expires_at_ns
      assert_equal second.lease, store.authority(name).checkpoint.lease
    end

    # A lease that ran out and was taken by another owner is answered as its
    # single renew would be, inside the batch, while the others renew.
    def test_a_lease_lost_inside_a_batch_is_refused_while_the_others_renew
      store = new_store
      names = Array.new(3) { |index| unique_name("batch-lost-#{index}") }
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 30).lease }
      taken = names[1]
      store.force_release(taken)
      newer = store.authority(taken).acquire(owner: 2, ttl: 30).lease
      alone = new_store.authority(taken).checkpoint

      decisions = store.renew_all(renewals(names, leases, ttl: 30))

      assert_equal %i[renewed rejected renewed], decisions.map(&:status)
      assert_equal :stale_token, decisions[1].reason
      assert_equal newer, store.authority(taken).checkpoint.lease, "the new holder's lease is untouched"
      assert_equal alone.last_issued, store.authority(taken).checkpoint.last_issued
      single = store.authority(taken).renew(owner: 1, token: leases[1].token, ttl: 30)
      assert_equal [single.status, single.reason], [decisions[1].status, decisions[1].reason]
    end

    # A renewal keeps the holder label, in a batch as alone, whether the
    # engine writes the batch's rows one by one or together: labels edited
    # by hand after the grants are still there after the batch.
    def test_a_batch_keeps_each_rows_label
      store = new_store
      names = Array.new(3) { |index| unique_name("batch-label-#{index}") }
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 30, label: "worker 1").lease }
      names.each_with_index { |name, index| write_raw_label(name, "edited by hand #{index}") }

      assert_equal %i[renewed] * 3, store.renew_all(renewals(names, leases, ttl: 60)).map(&:status)

      assert_equal(Array.new(3) { |index| "edited by hand #{index}" }, names.map { |name| raw_label(name) })
    end

    # All or nothing: a failure of the transaction is every renewal's
    # failure, and nothing of the batch is committed.
    def test_a_failed_batch_raises_and_commits_none_of_its_renewals
      names = Array.new(3) { |index| unique_name("batch-fail-#{index}") }
      leases = names.map { |name| new_store.authority(name).acquire(owner: 1, ttl: 30).lease }
      seen = []
      failing = new_store(before_commit: lambda { |commit|
        seen << commit.name
        raise StoreError, "forced failure of the batch" if seen.size == 3
      })

      error = assert_raises(StoreError) { failing.renew_all(renewals(names, leases, ttl: 60)) }

      assert_equal "forced failure of the batch", error.message
      assert_equal names, seen, "each renewal was decided in the one transaction before it failed"
      names.zip(leases) do |name, lease|
        assert_equal lease, new_store.authority(name).checkpoint.lease, "#{name}: nothing of the batch was committed"
      end
    end

    def test_renew_all_checks_every_renewal_before_any_io
      store = new_store
      name = unique_name("batch-args")
      lease = store.authority(name).acquire(owner: 1, ttl: 30).lease
      before = store.authority(name).checkpoint
      assert_raise_message(TypeError, /\Arenewals must be an Array of Hashes .*got "x" \(String\)\z/) { store.renew_all("x") }
      assert_raise_message(TypeError, /\Arenewals\[1\] must be a Hash .*got 42 \(Integer\)\z/) do
        store.renew_all([{ name: name, owner: 1, token: lease.token, ttl: 30 }, 42])
      end
      assert_raise_message(ArgumentError, "renewals[0] must have exactly the keys name, owner, token, ttl, got [:name]") do
        store.renew_all([{ name: name }])
      end
      assert_raise_message(ArgumentError, /\Arenewals\[1\]: .*ttl/) do
        store.renew_all([{ name: name, owner: 1, token: lease.token, ttl: 30 },
                         { name: name, owner: 1, token: lease.token, ttl: -1 }])
      end
      assert_raise_message(TypeError, /\Arenewals\[0\]\[:name\] must be a String/) do
        store.renew_all([{ name: 7, owner: 1, token: lease.token, ttl: 30 }])
      end
      assert_equal before, store.authority(name).checkpoint, "nothing was written"
    end

    # Two stores renewing the same leases in opposite orders, at once: the
    # rows are locked in the order of their names, so neither waits for the
    # other in a cycle (a deadlock would fail a batch).
    def test_concurrent_batches_in_opposite_orders_never_deadlock
      names = Array.new(6) { |index| unique_name("batch-order-#{index}") }
      owners = (1..names.size).to_a
      leases = names.zip(owners).map { |name, owner| new_store.authority(name).acquire(owner: owner, ttl: 60).lease }
      stores = [new_store, new_store]
      batches = [renewals(names, leases, ttl: 60), renewals(names, leases, ttl: 60).reverse]
      threads = stores.zip(batches).map do |store, batch|
        Thread.new { Array.new(15) { store.renew_all(batch).map(&:status) } }
      end
      threads.each { |thread| assert_equal [%i[renewed] * names.size] * 15, thread.value }
    ensure
      stores&.each(&:close)
    end

    private

    def renewals(names, leases, ttl:)
      names.zip(leases).map { |name, lease| { name: name, owner: lease.owner, token: lease.token, ttl: ttl } }
    end
  end
end
