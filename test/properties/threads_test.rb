# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Many Ruby threads on one authority: the extension runs each decision
  # under the GVL with no Ruby call in between, so calls are serialized, every
  # token is issued exactly once and in increasing order, and nothing crashes.
  class ThreadsTest < Minitest::Test
    THREADS = 8

    TTL = 0.0002

    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    # The four calls in turn; renew and release only with a token in hand.
    def decide(authority, owner, step, held)
      case step % 4
      when 0 then authority.acquire(owner: owner, now: now, ttl: TTL)
      when 1 then authority.reacquire(owner: owner, now: now, ttl: TTL)
      when 2 then held && authority.renew(owner: owner, token: held, now: now, ttl: TTL)
      else held && authority.release(owner: owner, token: held, now: now)
      end
    end

    # One worker with short leases; returns [decision, accepted by the fence]
    # for every call it made.
    def work(authority, fence, owner, calls)
      held = nil
      log = []
      calls.times do |step|
        decision = decide(authority, owner, step, held) or next
        held = decision.lease.token if decision.granted?
        held = nil if decision.released?
        log << [decision, decision.granted? && fence.accept(decision.lease.token)]
        Thread.pass if (step % 7).zero?
      end
      log
    end

    def run_workers(policy)
      authority = Authority.new(clock_policy: policy)
      fence = Fence.new
      calls = iterations(2000)
      threads = Array.new(THREADS) do |owner|
        Thread.new { work(authority, fence, owner, calls) }.tap { |thread| thread.report_on_exception = false }
      end
      [authority, fence, threads.map(&:value)]
    end

    def assert_tokens_are_sound(authority, fence, logs)
      grants = logs.map { |log| log.map(&:first).select(&:granted?).map { |decision| decision.lease.token } }
      all = grants.flatten

      refute_empty all
      assert_equal all.uniq.size, all.size, "a token was issued twice"
      grants.each { |tokens| assert_equal tokens.sort, tokens, "one thread saw tokens go down" }
      assert_equal (1..authority.checkpoint.last_issued).to_a, all.sort, "every issued token reached exactly one caller"
      accepted = logs.flat_map { |log| log.select(&:last).map { |decision, _| decision.lease.token } }

      assert_equal accepted.max, fence.highest
    end

    def assert_decisions_are_whole(logs)
      logs.each_with_index do |log, owner|
        log.each do |decision, _|
          assert_includes Decision::STATUSES, decision.status
          assert_equal owner, decision.lease.owner if decision.lease
        end
      end
    end

    def test_eight_threads_on_one_authority_with_the_clamp_policy
      authority, fence, logs = run_workers(:clamp)

      assert_tokens_are_sound(authority, fence, logs)
      assert_decisions_are_whole(logs)
      refute_includes logs.flatten.grep(Decision).map(&:reason), :clock_regressed
    end

    def test_eight_threads_on_one_authority_with_the_reject_policy
      authority, fence, logs = run_workers(:reject)

      assert_tokens_are_sound(authority, fence, logs)
      assert_decisions_are_whole(logs)
    end

    def test_renewals_keep_the_token_they_were_given
      authority = Authority.new(clock_policy: :clamp)
      threads = Array.new(THREADS) do |owner|
        Thread.new do
          Array.new(iterations(500)) do
            granted = authority.reacquire(owner: owner, now: now, ttl: 60)
            next [] unless granted.granted?

            renewed = authority.renew(owner: owner, token: granted.lease.token, now: now, ttl: 60)
            renewed.renewed? ? [granted.lease.token, renewed.lease.token] : []
          end
        end
      end
      pairs = threads.flat_map(&:value).reject(&:empty?)

      refute_empty pairs
      pairs.each { |granted, renewed| assert_equal granted, renewed }
    end

    def test_threads_with_their_own_authorities_and_holders
      cadence = Cadence.new(ttl: 30, renew_after: 10, warn_before: 5)
      results = Array.new(THREADS) do |owner|
        Thread.new do
          authority = Authority.new
          holder = Holder.new(token: authority.acquire(owner: owner, now: 0, ttl: 30).lease.token, at: 0, cadence: cadence)
          iterations(1000).times do |step|
            at = step + 1
            next unless holder.renewal_due?(at)

            holder.refresh(at)
            renewed = authority.renew(owner: owner, token: holder.token, now: at, ttl: 30)
            holder.confirm(token: renewed.lease.token, at: at)
          end
          [authority.checkpoint.last_issued, holder.state]
        end
      end.map(&:value)

      assert_equal [[1, :confirmed]] * THREADS, results
    end
  end
end
