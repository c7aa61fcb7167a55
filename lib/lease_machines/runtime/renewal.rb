# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The renewal thread's side of a {Held}: `@renewing` for a whole attempt (the hold's end waits for one in
    # flight), `@mutex` for the Holder.
    module Renewal
      # The holder's states past which nothing is renewed.
      DONE = %i[expired fenced].freeze

      def due_at
        @mutex.synchronize do
          next nil if @finished

          state = @holder.state
          next(@reported ? nil : @holder.confirmed_at) if DONE.include?(state)
          next expires_at if @renewals_ended # past max_hold: only the lease's end is left

          case state
          when :confirmed then @holder.confirmed_at + @holder.cadence.renew_after
          when :unconfirmed then [@retry_at, @holder.warning_deadline, expires_at].compact.min
          else [@retry_at, expires_at].compact.min
          end
        end
      end

      def renew
        sent = begin_renewal
        conclude_renewal(sent, sent && @calls.renew(self, sent.first, late: sent.last))
      ensure
        abandon_renewal
      end

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

      def conclude_renewal(sent, result, started: nil)
        return if sent == false

        if sent
          @calls.batch_renewed(self, result, started: started, late: sent.last) if started
          answer(result, sent[1])
        end
        report_loss
      ensure
        abandon_renewal
      end

      def abandon_renewal
        @renewing.unlock if @renewing.owned?
      end

      private

      def attempt(sent_at)
        was_at_risk, token, due = @mutex.synchronize { [@holder.state == :at_risk, @holder.token, planned_at] }
        return nil unless @mutex.synchronize { refresh(sent_at) }

        at_risk if !was_at_risk && state == :at_risk
        [token, sent_at, sent_at - due]
      end

      def refresh(at)
        @renewals_ended ||= !done? && !@holder.renewal_allowed?(at)
        @holder.refresh(at)
      end

      def planned_at = @retry_at || (@holder.confirmed_at + @holder.cadence.renew_after)

      def answer(result, sent_at)
        case result
        when Decision
          @mutex.synchronize do
            next expire(result.reason) unless result.renewed?
            # A confirmation arriving once the TTL ran out while in flight changes nothing.
            next unless @holder.confirm(token: result.lease.token, at: sent_at)

            @lease = result.lease
            @retry_at = nil
          end
        else
          @mutex.synchronize { @retry_at = sent_at + retry_interval }
        end
      end

      def retry_interval = (@holder.cadence.renew_after / 10.0).clamp(0.001, 1.0)

      def at_risk
        @calls.emit(:at_risk, self, status: :at_risk)
        @callbacks.call(:at_risk, self)
      end
    end
  end
end
