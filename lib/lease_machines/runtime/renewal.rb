# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The renewal thread's side of a {Held}, behind its locks: `@renewing`
    # for a whole attempt (the hold's end waits for one in flight), `@mutex`
    # for the Holder.
    module Renewal
      # When the renewal thread should next look (nil: never again).
      def due_at
        @mutex.synchronize do
          next nil if @finished
          next(@reported ? nil : @holder.confirmed_at) if done?
          next expires_at if @renewals_ended # past max_hold: only the lease's end is left

          case @holder.state
          when :confirmed then @holder.confirmed_at + @holder.cadence.renew_after
          when :unconfirmed then [@retry_at, @holder.warning_deadline, expires_at].compact.min
          else [@retry_at, expires_at].compact.min
          end
        end
      end

      # One look: lost if its TTL has run out, else a renewal attempt (a
      # confirmation counts from the request's send instant).
      def renew
        sent = begin_renewal
        conclude_renewal(sent, sent && @calls.renew(self, sent.first, late: sent.last))
      ensure
        abandon_renewal
      end

      # @api private: {#renew}'s first half, for a {RenewalBatch}: takes
      # `@renewing`, which {#conclude_renewal} (or {#abandon_renewal},
      # whatever happened) gives back.
      # @return [Array(Integer, Float, Float), nil, false] the renewal to
      #   send (token, send instant, lateness); nil: none (lost, or renewals
      #   ended); false: nothing to look at (the hold ended, or forked)
      def begin_renewal
        @renewing.lock
        return false if @finished || forked?

        sent_at = @calls.clock.now
        live = @mutex.synchronize do
          lapse(sent_at)
          !done?
        end
        live ? attempt(sent_at) : nil
      end

      # @api private: {#renew}'s second half: `result` (the Decision, or
      # the StoreError of the call, the batch's for every hold in it) is
      # answered as a single renewal's; `started`: a batch's start, for
      # this hold's event (a single renewal reported its own).
      def conclude_renewal(sent, result, started: nil)
        return if sent == false

        if sent
          @calls.renewed(self, result, started: started, late: sent.last) if started
          answer(result, sent[1])
        end
        report_loss
      ensure
        abandon_renewal
      end

      # @api private: gives `@renewing` back if this thread still holds it.
      def abandon_renewal
        @renewing.unlock if @renewing.owned?
      end

      # @api private: this hold's renewal as {Stores::BatchRenewal#renew_all} takes it.
      def renewal_request(token)
        @calls.renewal(token)
      end

      # @api private: the store its renewals may share a transaction with
      # others' on (nil: renewed alone).
      def renewal_store
        @calls.batch_store
      end

      private

      # @return [Array(Integer, Float, Float), nil] see {#begin_renewal}
      def attempt(sent_at)
        was_at_risk, token, due = @mutex.synchronize { [@holder.state == :at_risk, @holder.token, planned_at] }
        return nil unless @mutex.synchronize { refresh(sent_at) }

        at_risk if !was_at_risk && state == :at_risk
        [token, sent_at, sent_at - due]
      end

      # Inside @mutex: starts an attempt, unless the Holder allows none now
      # (past `max_hold`: renewals have ended for good).
      def refresh(at)
        @renewals_ended ||= !done? && !@holder.renewal_allowed?(at)
        @holder.refresh(at)
      end

      # When this renewal was planned: renew_after past the last
      # confirmation, or the retry after a failed attempt.
      def planned_at
        @retry_at || (@holder.confirmed_at + @holder.cadence.renew_after)
      end

      def answer(result, sent_at)
        case result
        when Decision
          @mutex.synchronize do
            next expire(result.reason) unless result.renewed?
            # A confirmation that arrives once the holder is lost (its TTL
            # ran out while the renewal was in flight) changes nothing.
            next unless @holder.confirm(token: result.lease.token, at: sent_at)

            @lease = result.lease
            @retry_at = nil
          end
        else
          @mutex.synchronize { @retry_at = sent_at + retry_interval }
        end
      end

      def retry_interval
        (@holder.cadence.renew_after / 10.0).clamp(0.001, 1.0)
      end

      def at_risk
        @calls.emit(:at_risk, self, status: :at_risk)
        @callbacks.call(:at_risk, self)
      end
    end
  end
end
