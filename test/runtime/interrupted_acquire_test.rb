# frozen_string_literal: true

require_relative "../stores/store_helper"
require "lease_machines/testing"

module LeaseMachines
  # `Thread#kill` or `Timeout` landing while `hold` acquires: once the grant
  # may have committed, the hold learns it and releases it (the block never
  # runs); a lease held by someone else is never released.
  module InterruptedAcquireContract
    # The thread is killed while the `acquire` event of a granted acquire
    # is being reported: after the grant committed, before the block.
    def test_a_kill_after_the_grant_committed_releases_the_lease
      authority = new_store.authority(unique_name("kill-after-grant"))
      granted = Queue.new
      killed = Queue.new
      subscriber = LeaseMachines.subscribe do |name, payload|
        next unless name == :acquire && payload[:status] == :granted && payload[:owner] == 21

        granted << true
        killed.pop
      end
      thread = Thread.new { authority.hold(owner: 21, ttl: 30) { flunk "the block ran" } }
      granted.pop
      thread.kill
      killed << true
      assert thread.join(10), "the killed thread ended"
      assert_nil authority.checkpoint.lease, "the lease was released"
      assert_equal 1, authority.checkpoint.last_issued, "it had been granted"
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end
  end

  # On PostgreSQL the interrupt lands inside the store call itself (the pg
  # gem waits for the answer in Ruby): tries at random instants around the
  # acquire, by Thread#kill and by Timeout, on a free resource and on one
  # another owner holds.
  class PostgresInterruptedAcquireTest < Minitest::Test
    include StoreTestHelper
    include InterruptedAcquireContract

    TRIES = 150

    def setup
      super
      @stores = []
    end

    def teardown
      @stores.each(&:close)
      super
    end

    def new_store
      Stores::Postgres.new(PostgresServer.url).tap { |store| @stores << store }
    end

    def test_an_interrupt_landing_anywhere_in_the_acquire_leaves_no_lease_behind
      store = new_store
      free = store.authority(unique_name("interrupted"))
      taken = store.authority(unique_name("interrupted-taken"))
      bystander = new_store.authority(taken.name).acquire(owner: 2, ttl: 600).lease
      span = acquire_span(free)
      leaked = []
      TRIES.times do |try|
        authority = try % 4 == 3 ? taken : free
        interrupt(try.even? ? :kill : :timeout, rand * span * 2) do
          authority.hold(owner: 100 + try, ttl: 600, wait: authority.equal?(taken) ? 0.05 : 0) { sleep }
        end
        lease = free.checkpoint.lease
        next unless lease

        leaked << [try, lease.owner]
        store.force_release(free.name)
      end
      assert_equal [], leaked, "tries whose interrupted hold left its lease held (of #{TRIES})"
      assert_equal bystander, taken.checkpoint.lease, "the other owner's lease was never touched"
    end

    # A Timeout landing inside a `require` breaks RubyGems' lock ("CRITICAL: RUBYGEMS_ACTIVATION_MONITOR"), so
    # nothing an acquire or its wait calls may load code lazily: Digest::SHA256 (the wait's channel name) was
    # loaded on a first wait, and the test above failed about one run in ten.
    def test_an_acquire_and_its_wait_load_no_code
      script = <<~RUBY
        require "lease_machines"
        require "lease_machines/stores/postgres"
        url, name = ARGV
        LeaseMachines::Stores::Postgres.new(url).authority(name).acquire(owner: 2, ttl: 60)
        store = LeaseMachines::Stores::Postgres.new(url)
        before = $LOADED_FEATURES.dup
        store.authority(name).hold(owner: 1, ttl: 30, wait: 0.1) { nil }
        store.authority(name + "-free").hold(owner: 1, ttl: 30) { nil }
        print(($LOADED_FEATURES - before).inspect)
      RUBY
      output = IO.popen([RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script, PostgresServer.url,
                         unique_name("lazy")], err: %i[child out], &:read)

      assert_equal "[]", output, "files required during the acquire and its wait"
    end

    private

    # Real seconds a hold of a free resource takes to acquire and release.
    def acquire_span(authority)
      started = monotonic
      20.times { authority.hold(owner: 1, ttl: 30) { nil } }
      (monotonic - started) / 40
    end

    def interrupt(how, after, &)
      if how == :kill
        thread = Thread.new(&)
        sleep after
        thread.kill
        assert thread.join(10), "the killed thread ended"
      else
        assert_raises(Timeout::Error) { Timeout.timeout(after, &) }
      end
    end
  end

  # The same on the in-memory store, where only the event subscriber's
  # window can be hit.
  class MemoryInterruptedAcquireTest < Minitest::Test
    include InterruptedAcquireContract

    def new_store
      @new_store ||= Stores::Memory.new
    end

    def unique_name(prefix)
      "#{prefix}-#{name}"
    end
  end
end
