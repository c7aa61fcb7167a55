# frozen_string_literal: true

require_relative "handover_contract"

module LeaseMachines
  class PostgresHandoverTest < Minitest::Test
    include HandoverContract

    def setup
      @url = StoreTestHelper::PostgresServer.url
      @stores = []
    end

    def teardown
      @stores.each(&:close)
    end

    def new_store(**options)
      Stores::Postgres.new(@url, **options).tap { |store| @stores << store }
    end

    # One wait: the notification wakes it.
    def wait_in_child(store, name)
      store.await_handover(name, TIMEOUT)
    end

    def test_a_release_through_the_locked_transaction_wakes_the_waiter
      name = unique_name("handover-hook")
      hooked = new_store(before_commit: ->(_commit) {})
      lease = hooked.authority(name).acquire(owner: 1, ttl: 60).lease
      elapsed, woken = with_waiter(name) { hooked.authority(name).release(owner: 1, token: lease.token) }
      assert woken
      assert_operator elapsed, :<, TIMEOUT / 4.0
    end

    # The NOTIFY is in the release's own transaction: a release that rolls
    # back wakes nobody.
    def test_a_release_that_rolls_back_notifies_nobody
      name = unique_name("handover-rollback")
      failing = new_store(before_commit: ->(commit) { raise "no" if commit.decision&.released? })
      lease = failing.authority(name).acquire(owner: 1, ttl: 60).lease
      waiter = new_store
      refute waiter.await_handover(name, 0)
      assert_raises(RuntimeError) { failing.authority(name).release(owner: 1, token: lease.token) }
      refute waiter.await_handover(name, 0.5), "nothing was committed, nothing was sent"
      assert_equal lease, failing.authority(name).checkpoint.lease
      new_store.authority(name).release(owner: 1, token: lease.token)
      assert waiter.await_handover(name, TIMEOUT), "the committed release is heard"
    end

    def test_a_release_of_another_resource_wakes_nobody_and_each_thread_hears_its_own
      store = new_store
      names = Array.new(2) { unique_name("handover-threads") }
      leases = names.map { |name| store.authority(name).acquire(owner: 1, ttl: 60).lease }
      waiter = new_store
      names.each { |name| refute waiter.await_handover(name, 0) }
      threads = names.map { |name| Thread.new { [waiter.await_handover(name, 1.5), monotonic] } }
      sleep 0.1
      store.authority(names[0]).release(owner: 1, token: leases[0].token)
      released_at = monotonic
      (first, first_at), (second, second_at) = threads.map(&:value)
      assert first
      assert_operator first_at - released_at, :<, 1.0
      refute second, "a release of another resource is not this one's"
      assert_operator second_at - released_at, :>=, 1.0
    end

    def test_a_forked_child_listens_on_its_own_connection_and_the_parent_keeps_its_own
      name = unique_name("handover-fork")
      waiter = new_store
      refute waiter.await_handover(name, 0) # the parent's listening connection is open
      lease = new_store.authority(name).acquire(owner: 1, ttl: 60).lease
      pid = fork do # a child that exits normally (finalizers run) unless it was woken
        exit!(3) if waiter.await_handover(name, 0.2)
        exit(4)
      end
      assert_equal 4, Process.wait2(pid).last.exitstatus
      new_store.authority(name).release(owner: 1, token: lease.token)
      assert waiter.await_handover(name, TIMEOUT), "the parent's listener survived the child"
    end

    def test_every_way_of_sending_the_release_notifies
      waiter = new_store
      [{ lock_timeout: 1 }, { prepared_statements: false }, { prepared_statements: false, statement_timeout: 5 }]
        .each do |options|
          store = new_store(**options)
          name = unique_name("handover-#{options.keys.join('-')}")
          lease = store.authority(name).acquire(owner: 1, ttl: 60).lease
          refute waiter.await_handover(name, 0)
          store.authority(name).release(owner: 1, token: lease.token)
          assert waiter.await_handover(name, TIMEOUT), options.inspect
        end
    end

    def test_listen_url_must_be_a_string
      error = assert_raises(TypeError) { Stores::Postgres.new(@url, listen_url: 5) }
      assert_equal "listen_url must be a String or nil, got 5", error.message
      store = new_store(listen_url: @url)
      name = unique_name("handover-url")
      lease = store.authority(name).acquire(owner: 1, ttl: 60).lease
      refute store.await_handover(name, 0)
      store.authority(name).release(owner: 1, token: lease.token)
      assert store.await_handover(name, TIMEOUT)
    end
  end

  class SQLiteHandoverTest < Minitest::Test
    include HandoverContract

    def setup
      @dir = Dir.mktmpdir("lease_machines_handover")
      @path = File.join(@dir, "leases.sqlite3")
      Stores::SQLite.new(@path).setup!.close
    end

    def teardown
      FileUtils.rm_rf(@dir)
    end

    def new_store(**options)
      Stores::SQLite.new(@path, **options)
    end

    # SQLite polls: each wait returns after a short interval, true once the
    # resource was found free.
    def wait_in_child(store, name)
      deadline = monotonic + TIMEOUT
      loop do
        return true if store.await_handover(name, TIMEOUT)
        return false if monotonic > deadline
      end
    end

    def test_each_wait_returns_after_a_short_interval
      store = new_store
      name = unique_name("handover-poll")
      store.authority(name).acquire(owner: 1, ttl: 60)
      started = monotonic
      refute store.await_handover(name, TIMEOUT), "still held"
      assert_operator monotonic - started, :<, TIMEOUT / 4.0, "a poll interval, not the whole timeout"
      assert store.await_handover(unique_name("nobody"), TIMEOUT), "a resource nobody holds is free"
    end
  end
end
