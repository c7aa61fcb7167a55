# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # Guards of one resource from several processes at once (fork), each with a
  # connection of its own. An including class provides `child_fences` (a new
  # fence object for a child), `log_sql` (the DDL of a log table) and the
  # engine's data module.
  module ConcurrentGuardCases
    include FenceTestHelper

    LOG = "fence_log"
    EXIT_FENCED = 3

    def log_write(conn, resource, token)
      if engine == :sqlite
        conn.execute("INSERT INTO #{LOG} (resource, token) VALUES (?, ?)", [resource, token])
      else
        conn.exec_params("INSERT INTO #{LOG} (resource, token) VALUES ($1, $2)", [resource, token])
      end
    end

    # The tokens the log holds for `resource`, in commit order.
    def logged_tokens(resource)
      if engine == :sqlite
        with_sqlite { |db| db.execute("SELECT token FROM #{LOG} WHERE resource = ? ORDER BY id", [resource]) }.flatten
      else
        @admin.exec_params("SELECT token FROM #{LOG} WHERE resource = $1 ORDER BY id", [resource]).column_values(0)
      end.map { |token| Integer(token, 10) }
    end

    # A child guarding `resource` with `token`: exits 0 when the write went
    # through, EXIT_FENCED when it was fenced (any other failure is 1).
    def guarding_child(resource, token, &inside)
      fork_child do
        fences = child_fences
        begin
          fences.guard(resource, token) do |conn|
            driver_write(conn, resource, "by token #{token}")
            log_write(conn, resource, token)
            inside&.call
          end
        rescue FencedError
          $stdout.flush
          Process.exit!(EXIT_FENCED)
        end
      end
    end

    def test_a_lower_token_waiting_behind_a_higher_one_is_refused_once_it_gets_in
      resource = unique_name("interleaved")
      holding_r, holding_w = IO.pipe
      go_r, go_w = IO.pipe
      holder = guarding_child(resource, 2) do
        holding_w.write("h")
        holding_w.flush
        go_r.read(1) # token 2 keeps its transaction (and the lock) open until told
      end
      assert_equal "h", read_within(holding_r, 1)

      newer = guarding_child(resource, 3)
      stale = guarding_child(resource, 1)
      wait_until_both_wait(newer, stale)
      go_w.write("g")
      go_w.flush

      statuses = [holder, newer, stale].map { |pid| wait_child(pid).exitstatus }
      assert_equal [0, 0, EXIT_FENCED], statuses, "token 2 and token 3 write; token 1, late, is fenced"
      assert_equal "by token 3", committed_body(resource)
      assert_equal 3, fence_class.new(fence_connection).highest(resource)
      assert_equal [2, 3], logged_tokens(resource), "the log, in commit order"
    ensure
      [holding_r, holding_w, go_r, go_w].each { |io| io&.close }
    end

    def test_many_processes_with_interleaved_tokens_leave_the_highest_write
      resource = unique_name("many")
      count = 60
      tokens = (1..count).to_a.shuffle(random: Random.new(42))
      results_r, results_w = IO.pipe
      children = Array.new(4) do |index|
        mine = tokens.each_slice(4).filter_map { |slice| slice[index] }
        fork_child do
          fences = child_fences
          outcomes = mine.map do |token|
            fences.guard(resource, token) do |conn|
              driver_write(conn, resource, "by token #{token}")
              log_write(conn, resource, token)
            end
            "#{token}:ok"
          rescue FencedError => e
            raise "wrong error #{e.inspect}" unless e.token == token && e.highest > token

            "#{token}:fenced"
          end
          results_w.write("#{outcomes.join(',')}\n")
          results_w.flush
        end
      end
      results_w.close
      assert(children.all? { |pid| wait_child(pid, timeout: 60).success? }, "every child finishes cleanly")
      outcomes = results_r.read.split.flat_map { |line| line.split(",") }.to_h { |entry| entry.split(":") }

      logged = logged_tokens(resource)
      assert_equal count, outcomes.size
      assert_equal logged.sort, outcomes.select { |_, outcome| outcome == "ok" }.keys.map(&:to_i).sort
      assert_equal logged.sort, logged, "in commit order, every accepted token is greater than the ones before"
      assert_equal logged.uniq, logged
      assert_equal count, logged.last, "the highest token is always accepted"
      assert_equal "by token #{count}", committed_body(resource)
      assert_equal count, fence_class.new(fence_connection).highest(resource)
    ensure
      results_r&.close
    end
  end
end
