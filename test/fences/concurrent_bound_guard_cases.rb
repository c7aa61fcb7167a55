# frozen_string_literal: true

require_relative "fence_helper"

module LeaseMachines
  # Bound guards (`store: true`) of one resource from several processes at
  # once, while the same processes take leases from the real store in the
  # same database: grants and guarded writes interleave, a worker may be
  # overtaken between its grant and its write, and forged tokens are mixed
  # in. The final state is the write of the highest token the store issued;
  # no forged token is ever written. An including class provides
  # `child_fences`, `child_store`, `create_log` and an engine's data module.
  module ConcurrentBoundGuardCases
    include FenceTestHelper

    LOG = "bound_fence_log"

    def log_write(conn, resource, token)
      if engine == :sqlite
        conn.execute("INSERT INTO #{LOG} (resource, token) VALUES (?, ?)", [resource, token.to_s])
      else
        conn.exec_params("INSERT INTO #{LOG} (resource, token) VALUES ($1, $2)", [resource, token.to_s])
      end
    end

    # The tokens the log holds for `resource`, in commit order.
    def logged_tokens(resource)
      rows = if engine == :sqlite
               with_sqlite { |db| db.execute("SELECT token FROM #{LOG} WHERE resource = ? ORDER BY id", [resource]) }.flatten
             else
               @admin.exec_params("SELECT token::text FROM #{LOG} WHERE resource = $1 ORDER BY id", [resource]).column_values(0)
             end
      rows.map { |token| Integer(token, 10) }
    end

    # One worker: `rounds` times, take the lease (waiting while another
    # holds it), maybe pause, write under the bound fence, release; and once
    # in a while show a token the store never issued. Reports
    # "token:outcome" entries on `out`.
    def worker(resource, owner, rounds, out)
      fork_child do
        store = child_store
        fences = child_fences
        random = Random.new(owner)
        authority = store.authority(resource)
        outcomes = []
        rounds.times do
          lease = nil
          lease = authority.acquire(owner: owner, ttl: 0.05).lease until lease
          sleep(random.rand * 0.03) # may outlive the lease: another worker overtakes
          outcomes << attempt(fences, resource, lease.token)
          authority.release(owner: owner, token: lease.token)
          outcomes << attempt(fences, resource, (2**64) - 1 - random.rand(1000)) if random.rand < 0.3
        end
        out.write("#{outcomes.join(',')}\n")
        out.flush
      end
    end

    def attempt(fences, resource, token)
      fences.guard(resource, token) do |conn|
        driver_write(conn, resource, "by token #{token}")
        log_write(conn, resource, token)
      end
      "#{token}:ok"
    rescue UnknownTokenError
      "#{token}:unknown"
    rescue FencedError => e
      raise "wrong error #{e.inspect}" unless e.token == token && e.highest > token

      "#{token}:fenced"
    end

    def test_interleaved_grants_and_bound_guards_leave_the_highest_issued_write
      resource = unique_name("bound-many")
      parent_store = child_store.tap(&:setup!)
      results_r, results_w = IO.pipe
      children = Array.new(4) { |index| worker(resource, index + 1, 12, results_w) }
      results_w.close
      assert(children.all? { |pid| wait_child(pid, timeout: 90).success? }, "every child finishes cleanly")
      outcomes = results_r.read.split.flat_map { |line| line.split(",") }.map { |entry| entry.split(":") }

      last_issued = parent_store.status(resource).last_issued
      issued, forged = outcomes.partition { |token, _| Integer(token) <= last_issued }
      assert_equal 48, issued.size, "every grant was tried"
      assert(forged.all? { |_, outcome| outcome == "unknown" }, "a forged token is refused: #{forged.inspect}")
      refute_empty forged, "forged tokens were tried"
      logged = logged_tokens(resource)
      assert_equal issued.select { |_, outcome| outcome == "ok" }.map { |token, _| Integer(token) }.sort, logged.sort
      assert_equal logged.sort, logged, "in commit order, every accepted token is at least the ones before"
      assert_equal last_issued, logged.last, "the highest issued token is always accepted"
      assert_equal "by token #{last_issued}", committed_body(resource)
      assert_equal last_issued, fence_class.new(fence_connection).highest(resource)
    ensure
      results_r&.close
      parent_store&.close
    end
  end
end
