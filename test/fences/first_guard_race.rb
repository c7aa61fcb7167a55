# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # Six processes make the first guard of a brand-new resource at the same
  # moment, each with its own connection and its own token (1..6), each
  # writing its token into the protected row. Whatever the engine does to
  # order them, the property is the fence's: the greatest token's write is
  # the one that survives, its token is the mark, and every other guard
  # either wrote before it or was refused with FencedError; none fails
  # otherwise (a deadlock, say). Twenty rounds, each on a new resource.
  #
  # An including class provides the engine's data module (`driver_write`,
  # `committed_body`), `race_fences` (a new fence, built in the child),
  # `race_connection(conn)` (the driver connection the block is given) and
  # `race_mark_connection` (what the parent reads the mark with).
  module FirstGuardRaceCases
    include FenceTestHelper

    # What a racing block raises on purpose.
    class RacingBlockFailed < StandardError; end

    ROUNDS = 20
    PROCESSES = 6
    EXIT_FENCED = 3
    EXIT_RAISED = 4

    def test_six_processes_making_the_first_guard_of_a_resource_at_once_keep_the_greatest_tokens_write
      lost = Array.new(ROUNDS) { race_round }.compact
      assert_empty lost, "rounds whose outcome broke the fence's property (#{lost.size} of #{ROUNDS})"
    end

    # The odd tokens' blocks raise after their write: their guards roll back
    # (the one that created the row too, when it is one of them), and the
    # others still queue behind them, never deadlocked.
    def test_the_race_keeps_the_greatest_tokens_write_when_some_blocks_raise
      lost = Array.new(ROUNDS) { race_round(raising: [1, 3, 5]) }.compact
      assert_empty lost, "rounds whose outcome broke the fence's property (#{lost.size} of #{ROUNDS})"
    end

    private

    # One round: nil when the greatest token's write survived and no guard
    # failed but by FencedError, else what went wrong.
    def race_round(raising: [], in_transaction: false)
      resource = unique_name("first-guard")
      ready_r, ready_w = IO.pipe
      gate_r, gate_w = IO.pipe
      pipes = [ready_r, ready_w, gate_r, gate_w]
      children = (1..PROCESSES).map { |token| racing_child(resource, token, pipes, raising.include?(token), in_transaction) }
      [ready_w, gate_r].each(&:close)
      PROCESSES.times { read_within(ready_r, 1, timeout: 30) }
      gate_w.close # every child's read of the gate returns at once
      statuses = children.map { |pid| wait_child(pid, timeout: 60).exitstatus }
      outcome = [committed_body(resource), fence_class.new(race_mark_connection).highest(resource)]
      expected = (1..PROCESSES).map { |token| raising.include?(token) ? [EXIT_RAISED, EXIT_FENCED] : [0, EXIT_FENCED] }
      return nil if statuses.zip(expected).all? { |status, allowed| allowed.include?(status) } &&
                    outcome == ["by token 6", 6]

      "#{resource}: exit statuses #{statuses.inspect} (tokens 1..6; #{EXIT_FENCED}: fenced, #{EXIT_RAISED}: " \
        "the block raised), " \
        "row and mark #{outcome.inspect}"
    ensure
      [ready_r, ready_w, gate_r, gate_w].each { |io| io.close unless io.nil? || io.closed? }
    end

    # A child that connects, says it is ready, waits at the gate, then
    # guards `resource` with `token` and writes "by token <token>" (then
    # raises, when `raising`). `in_transaction`: on a connection of its own,
    # inside a transaction it opens after the gate and commits after the guard.
    def racing_child(resource, token, pipes, raising, in_transaction)
      ready_r, ready_w, gate_r, gate_w = pipes
      fork_child do
        [ready_r, gate_w].each(&:close) # the gate opens when the parent's end closes, not before
        conn = race_client if in_transaction
        fences = conn ? fence_class.new(conn) : race_fences
        fences.highest(unique_name("warm-up")) # connected before the gate opens
        ready_w.write("r")
        ready_w.flush
        gate_r.read(1)
        race_guard(fences, conn, resource, token, raising)
      end
    end

    def race_guard(fences, conn, resource, token, raising)
      driver_begin(conn) if conn
      fences.guard(resource, token) do |guarded|
        driver_write(race_connection(guarded), resource, "by token #{token}")
        raise RacingBlockFailed if raising
      end
      race_commit(conn) if conn
    rescue FencedError
      Process.exit!(EXIT_FENCED)
    rescue RacingBlockFailed
      Process.exit!(EXIT_RAISED)
    end
  end

  # The race with every guard inside a transaction its caller opened on a
  # driver connection (the guard joins it under a savepoint): a deadlock
  # there would roll back the caller's work too, so the mark's statements
  # must not deadlock by themselves. An including class also provides
  # `race_client` (a new driver connection, made in the child) and
  # `race_commit(conn)`.
  module FirstGuardRaceInTransactionCases
    include FirstGuardRaceCases

    def test_the_race_inside_each_callers_transaction_keeps_the_greatest_tokens_write
      lost = Array.new(ROUNDS) { race_round(in_transaction: true) }.compact
      assert_empty lost, "rounds whose outcome broke the fence's property (#{lost.size} of #{ROUNDS})"
    end
  end
end
