# frozen_string_literal: true

require_relative "store_helper"

module LeaseMachines
  # A server store's `timeout:` (Stores::Deadline): a decision that cannot
  # finish (another session holds the resource's row lock) ends at the
  # timeout, sorted like any interrupt: StoreError before its COMMIT (or
  # the fast path's write) was sent, OutcomeUnknownError after. Without the
  # timeout each of these calls would wait for the lock until the session
  # holding it lets go. An including test class provides `new_store`,
  # `hold_row_lock(name) { }` (another session holds the row's lock for the
  # block) and `lock_waiters` (the statements still waiting for a row lock).
  module DeadlineCases
    include StoreTestHelper

    TIMEOUT = 0.5
    # The most a call may take past its timeout here (the interrupt, the
    # reconnect), far below the lock holder's 10 s.
    SLACK = 4

    def test_a_fast_path_write_behind_a_row_lock_ends_at_the_timeout_as_outcome_unknown
      name = unique_name("deadline-write")
      new_store.authority(name).acquire(owner: 1, now: 100, ttl: 10)
      store = new_store(timeout: TIMEOUT)

      error, elapsed = hold_row_lock(name) { bounded_call { store.authority(name).reacquire(owner: 1, now: 101, ttl: 10) } }
      assert_kind_of OutcomeUnknownError, error
      assert_kind_of Stores::Deadline::Exceeded, error.cause
      assert_match(/the write \(which commits the decision\) was interrupted .*timeout \(0\.5 s\)/, error.message)
      assert_operator elapsed, :>=, TIMEOUT
      assert_predicate store.authority(name).reacquire(owner: 1, now: 102, ttl: 10), :granted?,
                       "the same store reconnects and decides again"
    end

    def test_a_locked_transaction_behind_a_row_lock_ends_at_the_timeout_with_nothing_committed
      name = unique_name("deadline-lock")
      baseline = new_store.authority(name)
      baseline.acquire(owner: 1, now: 100, ttl: 10)
      before = baseline.checkpoint
      store = new_store(timeout: TIMEOUT, before_commit: ->(_commit) {})

      error, = hold_row_lock(name) { bounded_call { store.authority(name).reacquire(owner: 1, now: 101, ttl: 10) } }
      assert_kind_of StoreError, error
      refute_kind_of OutcomeUnknownError, error, "the row lock was never granted: COMMIT was not sent"
      assert_match(/did not finish within the store's timeout \(0\.5 s\).*nothing was committed/, error.message)
      assert_equal before, baseline.checkpoint
      assert_equal 2, store.authority(name).reacquire(owner: 1, now: 102, ttl: 10).lease.token
    end

    # The interrupt stops the statement it left waiting on the server
    # (PostgreSQL: a cancel request; MySQL: KILL QUERY): dropping the
    # connection alone leaves it waiting, and a MySQL write would commit once
    # the lock is granted.
    def test_a_timeout_stops_the_statement_left_waiting_for_the_row_lock
      name = unique_name("deadline-stop")
      new_store.authority(name).acquire(owner: 1, now: 100, ttl: 10)
      before = new_store.authority(name).checkpoint
      store = new_store(timeout: TIMEOUT)
      hold_row_lock(name) do
        assert_raises(OutcomeUnknownError) { store.authority(name).reacquire(owner: 1, now: 101, ttl: 10) }
        wait_for(timeout: 3) { lock_waiters.zero? }
      end
      sleep 0.2 # time for a write that was not stopped to commit
      assert_equal before, new_store.authority(name).checkpoint, "the stopped write never committed"
    end

    def test_a_timeout_is_a_positive_finite_number_of_seconds
      [0, -1, Float::INFINITY, Float::NAN].each do |bad|
        error = assert_raises(ArgumentError) { new_store(timeout: bad) }
        assert_equal "timeout must be a finite, positive number of seconds, got #{bad.inspect}", error.message
      end
      ["1", Complex(1, 1), Rational(1, 2)].each do |bad|
        error = assert_raises(TypeError) { new_store(timeout: bad) }
        assert_equal "timeout must be an Integer or Float number of seconds, got #{bad.inspect}", error.message
      end
    end

    private

    # @return [[Exception, Float]] what the block raised (it must raise) and how long it took
    def bounded_call
      started = monotonic
      caller = Thread.new do
        yield
        nil
      rescue StandardError => e
        e
      end
      flunk "the call still waits #{TIMEOUT + SLACK} s after it started (timeout: #{TIMEOUT})" unless caller.join(TIMEOUT + SLACK)
      error = caller.value
      refute_nil error, "the call returned a decision while another session held the row lock"
      [error, monotonic - started]
    ensure
      caller&.kill
    end
  end
end
