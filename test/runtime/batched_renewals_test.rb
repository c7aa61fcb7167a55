# frozen_string_literal: true

require_relative "runtime_helper"

module LeaseMachines
  # The renewal thread renews the holds of one store that come due together
  # in one transaction (Store#renew_all), and routes each answer to its hold
  # exactly as a single renewal's: renewed, lost, failed.
  class BatchedRenewalsTest < Minitest::Test
    include RuntimeHelper

    # Counts a store's transactions (each one BEGIN ... COMMIT).
    module CountedTransactions
      def transactions
        @transactions || 0
      end

      def transaction(...)
        @transactions = transactions + 1
        super
      end
    end

    def setup
      super
      @store.singleton_class.prepend(CountedTransactions)
      @other = Stores::Memory.new(clock: @clock)
      @other.singleton_class.prepend(CountedTransactions)
    end

    def test_holds_due_together_are_renewed_in_one_transaction_per_store
      in_holds(%w[a b c]) do |helds|
        @other.authority("d").hold(owner: 7, ttl: TTL, clock: @clock) do |other|
          @other.authority("e").hold(owner: 7, ttl: TTL, clock: @clock) do |another|
            before = [@store.transactions, @other.transactions]
            @clock.advance(10) # every renewal is due at 1010

            assert_equal [1, 1], [@store.transactions - before[0], @other.transactions - before[1]],
                         "one commit per store for the tick"
            assert_equal %i[renewed] * 5, events(:renew, :status)
            (helds + [other, another]).each do |held|
              assert_equal :confirmed, held.state
              assert_equal (1010 + TTL) * 1_000_000_000, held.lease.expires_at_ns, "#{held.resource} was renewed"
            end
          end
        end
      end
    end

    # One lease of the batch was taken by another owner: it alone is lost,
    # reported as a single renewal's refusal would be; the others renew.
    def test_a_lease_lost_inside_a_batch_is_reported_lost_while_the_others_renew
      lost = Queue.new
      in_holds(%w[a b c], on_lost: ->(held) { lost << held }) do |helds|
        @store.force_release("b")
        authority("b").acquire(owner: 12, ttl: TTL)
        @clock.advance(10)

        assert_same helds[1], lost.pop
        assert_equal %i[expired stale_token], [helds[1].state, helds[1].reason]
        assert_equal %i[confirmed confirmed], [helds[0].state, helds[2].state]
        statuses = events(:renew, :resource, :status).sort.map { |resource, status| [resource, status.to_s] }
        assert_equal [%w[a renewed], %w[b rejected], %w[c renewed]], statuses
        assert_equal [:stale_token], events(:lost, :reason)
        assert lost.empty?
      end
    end

    # The batch's transaction failed: every hold in it hears the failure (a
    # failed renewal each, none renewed) and tries again, as a single
    # renewal that failed would.
    def test_a_failed_batch_is_a_failure_of_each_of_its_holds
      in_holds(%w[a b c]) do |helds|
        fail_next(1)
        @clock.advance(10)

        assert_equal [%w[a failed store_error], %w[b failed store_error], %w[c failed store_error]],
                     events(:renew, :resource, :status, :reason).map { |fields| fields.map(&:to_s) }.sort
        helds.each do |held|
          assert_equal :unconfirmed, held.state, "#{held.resource}: not renewed"
          assert_equal (1000 + TTL) * 1_000_000_000, authority(held.resource).checkpoint.lease.expires_at_ns
        end
        @clock.advance(1) # the retry (renew_after / 10)
        assert_equal %i[confirmed] * 3, helds.map(&:state)
      end
    end

    # With nobody subscribed to the events, a failed renewal is still a
    # failure answered with a retry (it used to raise TypeError in the event
    # timing, logged as a warning, and no retry was planned).
    def test_a_failed_renewal_with_nobody_subscribed_is_retried_without_a_warning
      LeaseMachines.unsubscribe(@subscriber)
      in_hold("a") do |held|
        fail_next(1)
        warnings = capture_log { @clock.advance(10) }
        assert_equal "", warnings
        assert_equal :unconfirmed, held.state
        @clock.advance(1)
        assert_equal :confirmed, held.state
      end
    end

    private

    # Holds each name (one thread each) and yields the Helds; they were all
    # granted at the same instant, so their renewals come due together.
    def in_holds(names, helds = [], **options, &)
      return yield helds if names.empty?

      in_hold(names.first, **options) { |held| in_holds(names.drop(1), helds + [held], **options, &) }
    end
  end
end
