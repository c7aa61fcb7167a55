# frozen_string_literal: true

require_relative "fence_helper"
require_relative "reissued_token_cases"

module LeaseMachines
  # What every fence must do, on every engine and every kind of connection,
  # checked against what was committed (read on another connection). An
  # including test class provides `new_fences` and `write(connection, name,
  # body)` (a write on the connection the guard's block is given), and
  # includes an engine's data module (FenceTestHelper::SQLiteData or
  # PostgresData).
  module GuardContract
    include FenceTestHelper
    include ReissuedTokenCases

    def fences
      @fences ||= new_fences
    end

    def test_the_first_guard_sets_the_mark_and_commits_the_writes
      resource = unique_name("reports/nightly")
      value = fences.guard(resource, 3) do |conn|
        write(conn, resource, "by token 3")
        :written
      end

      assert_equal :written, value
      assert_equal "by token 3", committed_body(resource)
      assert_equal 3, fences.highest(resource)
      assert_equal stored_text(3), committed_mark_text(resource)
    end

    def test_equal_and_greater_tokens_pass_and_the_mark_only_rises
      resource = unique_name
      fences.guard(resource, 5) { |conn| write(conn, resource, "first by 5") }
      fences.guard(resource, 5) { |conn| write(conn, resource, "second by 5") }
      assert_equal "second by 5", committed_body(resource), "an equal token passes: one lease, many writes"
      assert_equal 5, fences.highest(resource)

      fences.guard(resource, 9) { |conn| write(conn, resource, "by 9") }
      assert_equal "by 9", committed_body(resource)
      assert_equal 9, fences.highest(resource)
    end

    def test_a_stale_token_is_refused_and_nothing_of_the_block_runs
      resource = unique_name
      fences.guard(resource, 2) { |conn| write(conn, resource, "by the successor, token 2") }
      ran = false

      error = assert_fenced(resource, 1, 2) do
        fences.guard(resource, 1) do |conn|
          ran = true
          write(conn, resource, "stale, token 1")
        end
      end

      refute ran, "the block of a refused guard must not run"
      assert_equal "#{resource.inspect} refused token 1: it has already accepted token 2", error.message
      assert_nil error.record
      assert_equal "by the successor, token 2", committed_body(resource)
      assert_equal stored_text(2), committed_mark_text(resource)
    end

    def test_an_exception_in_the_block_rolls_back_its_writes_and_the_mark
      resource = unique_name
      fences.guard(resource, 4) { |conn| write(conn, resource, "kept, token 4") }
      failure = Class.new(StandardError)
      raised = failure.new("the report did not render")

      error = assert_raises(failure) do
        fences.guard(resource, 6) do |conn|
          write(conn, resource, "half-written by token 6")
          write(conn, "#{resource}/other", "another row by token 6")
          raise raised
        end
      end

      assert_same raised, error
      assert_equal "kept, token 4", committed_body(resource), "the block's earlier writes must be rolled back"
      assert_nil committed_body("#{resource}/other")
      assert_equal 4, fences.highest(resource), "the mark must be rolled back with the writes"
      fences.guard(resource, 5) { |conn| write(conn, resource, "token 5 still passes") }
      assert_equal "token 5 still passes", committed_body(resource)
    end

    def test_a_raising_block_on_a_fresh_resource_leaves_no_fence_row
      resource = unique_name
      assert_raises(RuntimeError) do
        fences.guard(resource, 1) do |conn|
          write(conn, resource, "x")
          raise "no"
        end
      end

      assert_equal 0, fence_rows(resource)
      assert_nil fences.highest(resource)
      assert_nil committed_body(resource)
    end

    def test_token_zero_is_stale_like_the_in_memory_fence
      refute Fence.new.accept(0), "the in-memory rule this follows"
      fresh = unique_name
      ran = false
      error = assert_fenced(fresh, 0, nil) { fences.guard(fresh, 0) { ran = true } }
      assert_equal "#{fresh.inspect} refused token 0: tokens start at 1, 0 is never issued (the fence has " \
                   "accepted no token yet)", error.message
      refute ran
      assert_equal 0, fence_rows(fresh), "token 0 must not create a fence row"

      marked = unique_name
      fences.guard(marked, 7) { |conn| write(conn, marked, "by 7") }
      assert_fenced(marked, 0, 7) { fences.guard(marked, 0) { ran = true } }
      refute ran
      assert_equal "by 7", committed_body(marked)
    end

    # A guard commits only when its block returns. Left any other way, it
    # rolls back, so nothing of the half-run block (nor its mark) can be
    # committed later by whoever uses the connection next: Timeout (a throw
    # on Ruby 3.1 and 3.2, which no `rescue` sees), Thread#kill, throw.
    def test_a_guard_left_by_timeout_rolls_back_and_the_next_guard_commits
      assert_interrupted_guard_rolls_back do |resource|
        assert_raises(Timeout::Error) do
          Timeout.timeout(0.3) do
            fences.guard(resource, 9) do |conn|
              write(conn, resource, "half-done by 9")
              sleep 5
            end
          end
        end
      end
    end

    def test_a_guard_left_by_thread_kill_rolls_back_and_the_next_guard_commits
      assert_interrupted_guard_rolls_back do |resource|
        inside = Queue.new
        thread = Thread.new do
          fences.guard(resource, 9) do |conn|
            write(conn, resource, "half-done by 9")
            inside << true
            sleep
          end
        end
        inside.pop
        thread.kill.join
      end
    end

    def test_a_guard_left_by_throw_rolls_back_and_the_next_guard_commits
      assert_interrupted_guard_rolls_back do |resource|
        catch(:leave) do
          fences.guard(resource, 9) do |conn|
            write(conn, resource, "half-done by 9")
            throw :leave
          end
        end
      end
    end

    def assert_interrupted_guard_rolls_back
      resource = unique_name
      fences.guard(resource, 4) { |conn| write(conn, resource, "kept, token 4") }
      yield resource

      assert_equal "kept, token 4", committed_body(resource)
      assert_equal 4, fences.highest(resource), "the interrupted guard's mark must be rolled back"
      fences.guard(resource, 10) { |conn| write(conn, resource, "by 10, after the interrupt") }
      assert_equal "by 10, after the interrupt", committed_body(resource), "the next guard must commit"
      assert_equal stored_text(10), committed_mark_text(resource)
    end

    def test_highest_is_nil_for_a_resource_never_guarded
      assert_nil fences.highest(unique_name)
    end

    def test_setup_is_idempotent
      assert_same fences, fences.setup!
      assert_same fences, fences.setup!
      resource = unique_name
      fences.guard(resource, 1) { |conn| write(conn, resource, "after setup") }
      assert_equal 1, fences.highest(resource)
    end

    def test_a_guard_inside_a_guard_joins_it
      outer = unique_name("outer")
      inner = unique_name("inner")
      fences.guard(inner, 8) { |conn| write(conn, inner, "inner by 8") }

      fences.guard(outer, 1) do |conn|
        write(conn, outer, "outer by 1")
        assert_fenced(inner, 3, 8) { fences.guard(inner, 3) { |c| write(c, inner, "stale inner") } }
        assert_raises(RuntimeError) do
          fences.guard(inner, 9) do |c|
            write(c, inner, "inner by 9, rolled back")
            raise "inner failure"
          end
        end
        fences.guard(inner, 8) { |c| write(c, inner, "inner again by 8") }
      end

      assert_equal "outer by 1", committed_body(outer)
      assert_equal "inner again by 8", committed_body(inner)
      assert_equal [1, 8], [fences.highest(outer), fences.highest(inner)]
    end

    def test_the_extremes_of_the_token_range_compare_in_sql
      resource = unique_name
      below = (2**63) - 1
      fences.guard(resource, below) { |conn| write(conn, resource, "2**63-1") }
      assert_equal stored_text(below), committed_mark_text(resource)

      fences.guard(resource, 2**63) { |conn| write(conn, resource, "2**63") }
      assert_equal stored_text(2**63), committed_mark_text(resource)
      assert_fenced(resource, below, 2**63) { fences.guard(resource, below) { flunk "ran" } }

      fences.guard(resource, U64_MAX) { |conn| write(conn, resource, "2**64-1") }
      assert_equal stored_text(U64_MAX), committed_mark_text(resource)
      assert_fenced(resource, 2**63, U64_MAX) { fences.guard(resource, 2**63) { flunk "ran" } }
      assert_fenced(resource, 10, U64_MAX) { fences.guard(resource, 10) { flunk "ran" } }
      fences.guard(resource, U64_MAX) { |conn| write(conn, resource, "2**64-1 again") }

      assert_equal "2**64-1 again", committed_body(resource)
      assert_equal U64_MAX, fences.highest(resource)
    end

    def test_guard_refuses_bad_arguments_before_anything_is_sent
      ill_typed!
      resource = unique_name
      assert_error(TypeError, "token must be an Integer in #{OWNER_RANGE}, got \"1\" (String)") do
        fences.guard(resource, "1") { flunk "ran" }
      end
      assert_error(RangeError, "token must be an Integer in #{OWNER_RANGE}, got -1") { fences.guard(resource, -1) { flunk } }
      assert_error(TypeError, "resource must be a String (the resource name), got :nightly (Symbol)") do
        fences.guard(:nightly, 1) { flunk "ran" }
      end
      assert_error(ArgumentError, "guard needs a block: the writes the fence protects") { fences.guard(resource, 1) }
      assert_equal 0, fence_rows(resource)
    end

    def assert_error(klass, message, &)
      error = assert_raises(klass, &)
      assert_equal [klass, message], [error.class, error.message]
      error
    end
  end

  # A guard inside a transaction the caller opened on the fence's
  # connection. The including class provides `outer_transaction(commit:) {
  # |connection| }`, which opens one, yields, and commits or rolls back.
  module JoiningContract
    def test_a_guard_joins_the_callers_transaction_and_commits_with_it
      resource = unique_name
      outer_transaction(commit: true) do |conn|
        write(conn, "#{resource}/before", "written before the guard")
        fences.guard(resource, 5) { |c| write(c, resource, "guarded by 5") }

        assert_nil committed_body(resource), "the guard must not commit the caller's transaction"
        assert_nil committed_mark_text(resource)
      end

      assert_equal "written before the guard", committed_body("#{resource}/before")
      assert_equal "guarded by 5", committed_body(resource)
      assert_equal 5, fences.highest(resource)
    end

    def test_a_refused_guard_inside_a_transaction_leaves_nothing_and_the_transaction_goes_on
      resource = unique_name
      fences.guard(resource, 5) { |conn| write(conn, resource, "by 5") }

      outer_transaction(commit: true) do |conn|
        write(conn, "#{resource}/before", "before")
        assert_fenced(resource, 4, 5) { fences.guard(resource, 4) { |c| write(c, resource, "stale by 4") } }
        write(conn, "#{resource}/after", "after: the transaction is still usable")
      end

      assert_equal "by 5", committed_body(resource)
      assert_equal "before", committed_body("#{resource}/before")
      assert_equal "after: the transaction is still usable", committed_body("#{resource}/after")
      assert_equal stored_text(5), committed_mark_text(resource)
    end

    def test_a_raising_block_inside_a_transaction_rolls_back_to_the_savepoint
      assert_left_guard_rolls_back_to_the_savepoint do |guard|
        assert_raises(RuntimeError) { guard.call { raise "render failed" } }
      end
    end

    def test_a_guard_left_by_throw_inside_a_transaction_rolls_back_to_the_savepoint
      assert_left_guard_rolls_back_to_the_savepoint do |guard|
        catch(:leave) { guard.call { throw :leave } }
      end
    end

    # Runs, inside the caller's transaction, a guard whose block writes and
    # is then left by `leave`; the caller's statements before and after it
    # commit, and nothing of the guard.
    def assert_left_guard_rolls_back_to_the_savepoint(&leave)
      resource = unique_name
      fences.guard(resource, 5) { |conn| write(conn, resource, "by 5") }

      outer_transaction(commit: true) do |conn|
        write(conn, "#{resource}/before", "before")
        leave.call(lambda do |&leaving|
          fences.guard(resource, 6) do |c|
            write(c, resource, "by 6, rolled back")
            leaving.call
          end
        end)
        write(conn, "#{resource}/after", "after")
      end

      assert_equal "by 5", committed_body(resource)
      assert_equal %w[before after], [committed_body("#{resource}/before"), committed_body("#{resource}/after")]
      assert_equal 5, fences.highest(resource)
    end

    def test_rolling_back_the_callers_transaction_takes_the_guard_back
      resource = unique_name
      fences.guard(resource, 2) { |conn| write(conn, resource, "by 2") }

      outer_transaction(commit: false) do
        fences.guard(resource, 7) { |c| write(c, resource, "by 7, rolled back with the caller's transaction") }
        assert_equal 7, fences.highest(resource), "inside the transaction the new mark is seen"
      end

      assert_equal "by 2", committed_body(resource)
      assert_equal 2, fences.highest(resource)
    end
  end
end
