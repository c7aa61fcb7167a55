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
        @renewing.synchronize do
          return if @finished || forked?

          sent_at = @calls.clock.now
          live = @mutex.synchronize do
            lapse(sent_at)
            !done?
          end
          attempt(sent_at) if live
          report_loss
        end
      end

      private

      def attempt(sent_at)
        was_at_risk, token, due = @mutex.synchronize { [@holder.state == :at_risk, @holder.token, planned_at] }
        return unless @mutex.synchronize { refresh(sent_at) }

        at_risk if !was_at_risk && state == :at_risk
        answer(@calls.renew(self, token, late: sent_at - due), sent_at)
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
