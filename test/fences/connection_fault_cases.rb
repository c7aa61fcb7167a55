# frozen_string_literal: true

require_relative "guard_contract"

module LeaseMachines
  # What a fence's connection survives, for the kinds of connection each case
  # names. The connections come from the stores' connection layer
  # (Stores::Connections), so these are the faults the stores survive too.
  # An including class provides `fences`, `write(connection, name, body)`,
  # `server_session(connection)` (the server's id of the connection's
  # session) and `end_session(id)` (ends it from another connection).

  # A fence that opened its own connection (from a URL): a forked child never
  # touches the parent's session, whether it used the fence or not.
  module ForkedChildCases
    def test_a_forked_child_that_exits_leaves_the_parents_fence_connection
      resource = unique_name("fork")
      session = fences.guard(resource, 1) { |conn| server_session(conn) }
      %i[unused used].each_with_index do |child, i|
        pid = fork do
          fences.guard(resource, 2 + i) { |conn| write(conn, resource, "by the child") } if child == :used
          exit(0)
        end
        _, status = Process.waitpid2(pid)
        assert_predicate status, :success?, "the child (#{child}) exited normally"
        assert_equal session, fences.guard(resource, 2 + i) { |conn| server_session(conn) },
                     "the parent guards on in the same server session after a child that #{child} the fence"
      end
    end
  end

  # A connection the server ended (killed, or lost) fails a guard only with
  # the gem's errors: StoreError before COMMIT (nothing was written),
  # OutcomeUnknownError during it; never a driver's raw error. The guard after
  # it works again (a reconnected connection) or is refused with StoreError
  # (a closed connection the caller gave).
  module LostConnectionCases
    def test_a_connection_ended_between_guards_fails_the_next_guard_with_store_error
      resource = unique_name("ended")
      end_session(fences.guard(resource, 1) { |conn| server_session(conn) })
      error = assert_raises(StoreError) { fences.guard(resource, 2) { |conn| write(conn, resource, "lost") } }
      refute_kind_of OutcomeUnknownError, error
      assert_nil committed_body(resource)
      assert_the_next_guard_works_or_is_refused(resource)
    end

    def test_a_connection_ended_inside_the_block_fails_the_guard_with_outcome_unknown
      resource = unique_name("ended-in-block")
      assert_raises(OutcomeUnknownError) do
        fences.guard(resource, 1) { |conn| end_session(server_session(conn)) }
      end
      assert_the_next_guard_works_or_is_refused(resource)
    end

    def test_a_read_on_a_connection_ended_raises_store_error_and_the_next_read_works_or_is_refused
      resource = unique_name("ended-read")
      end_session(fences.guard(resource, 1) { |conn| server_session(conn) })
      assert_raises(StoreError) { fences.highest(resource) }
      assert_equal 1, fences.highest(resource)
    rescue StoreError => e
      assert_match(/connection is closed/, e.message)
    end

    def test_setup_on_a_connection_ended_raises_store_error
      end_session(fences.guard(unique_name("ended-setup"), 1) { |conn| server_session(conn) })
      error = assert_raises(StoreError) { fences.setup! }
      assert_match(/\(nothing was (created|written)\)/, error.message)
      assert_same fences, fences.setup!, "setup! works again once the connection is reconnected or reopened"
    rescue StoreError => e
      assert_match(/connection is closed/, e.message)
    end

    private

    def assert_the_next_guard_works_or_is_refused(resource)
      fences.guard(resource, 3) { |conn| write(conn, resource, "after") }
      assert_equal "after", committed_body(resource)
    rescue StoreError => e
      assert_match(/connection is closed/, e.message)
    end
  end

  # SQLite: while another connection holds the write lock, setup! waits for
  # it as a guard does, up to the busy timeout, then raises StoreError. The
  # including class provides `fences_waiting(seconds)`, a fence whose
  # connection waits that long.
  module WriteLockCases
    def test_setup_waits_for_another_writer_and_fails_cleanly_past_the_busy_timeout
      fences = fences_waiting(0.2)
      with_sqlite do |other|
        other.execute("BEGIN IMMEDIATE")
        started = monotonic
        error = assert_raises(StoreError) { fences.setup! }
        assert_operator monotonic - started, :>=, 0.15
        assert_match(/database is locked/, error.message)
        assert_kind_of SQLite3::BusyException, error.cause
        other.execute("ROLLBACK")
      end
      assert_same fences, fences.setup!, "setup! works once the lock was let go"
    end
  end
end
