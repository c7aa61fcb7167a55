# frozen_string_literal: true

require "forwardable"

module LeaseMachines
  module Runtime
    # One lease held by `hold`: what the block is given. Every reader reads the clock when called, so a pause
    # (GC, SIGSTOP) past the TTL reads as lost at once.
    class Held
      extend Forwardable
      include Renewal

      NOT_TOLD = {}.freeze
      FENCED = %i[fenced reissued].freeze

      attr_reader :resource, :owner

      def initialize(calls, lease, sent_at, callbacks)
        @calls = calls
        @resource = calls.resource
        @owner = lease.owner
        @lease = lease
        @holder = Holder.new(token: lease.token, at: sent_at, cadence: calls.cadence)
        @granted_at = sent_at # the granting request was sent: `held:` counts from here
        @callbacks = callbacks
        @pid = Process.pid
        @mutex = Mutex.new
        @renewing = Mutex.new
        @reason = nil # why it was lost, first
        @lapsed = false # it ran out, or the authority said it is gone: not ours to release
        @reported = false # the loss was reported
        @finished = false # the hold ended
        @released = false # the hold ended holding the lease
        @retry_at = nil
        @renewals_ended = false # past max_hold: no renewal is sent again
        @thread_to_interrupt = nil # `interrupt: true`: the block's thread, raised LeaseLost in on a loss
      end

      def_delegators :@calls, :slot, :tags, :subject, :renewal_request, :renewal_store

      def token = @mutex.synchronize { @holder.token }

      def lease = @mutex.synchronize { @lease }

      def state = forked? ? :expired : at_now { (@released && :released) || @holder.state }

      def reason = forked? ? :forked : at_now { (@released && :released) || @reason }

      def at_risk? = forked? || at_now { |now| @released || @holder.at_risk?(now) }

      def lost? = forked? || at_now { @released || done? }

      def remaining
        return 0.0 if forked?

        at_now { |now| @released || done? ? 0.0 : [expires_at - now, 0.0].max }
      end

      def check!
        error = at_now { |now| lost_error(now) }
        raise error if error

        self
      end

      def fenced!(reason: :fenced)
        raise ArgumentError, "reason must be :fenced or :reissued, got #{reason.inspect}" unless FENCED.include?(reason)

        changed = @mutex.synchronize do
          next false if @finished

          @reason ||= reason
          @holder.fence
        end
        return false unless changed

        @calls.emit(:fenced, self, status: :fenced, reason: reason)
        report_loss
        true
      end

      def inspect = "#<#{self.class.name} resource=#{@resource.inspect} owner=#{@owner} token=#{token} state=#{state.inspect}>"
      alias to_s inspect

      # Released unless it ran out: a fenced lease may still be held, and releasing it lets the next holder in.
      def finish
        now = @calls.clock.now
        forked = forked?
        release = lost = false
        token = @renewing.synchronize do
          @mutex.synchronize do
            expires_at = lapse(now, forked)
            @finished = true
            @thread_to_interrupt = nil
            lost = done?
            @released = !lost
            release = !@lapsed && now < expires_at
            @holder.token
          end
        end
        report_loss if lost
        @calls.release(self, token, held_for(now)) if release && !forked
      end

      def interrupt_on_loss(thread) = @mutex.synchronize { @thread_to_interrupt = thread }

      def interrupt_error
        @mutex.synchronize do
          @interrupt_error ||= LeaseLost.new(resource: @resource, token: @holder.token, state: @holder.state,
                                             reason: @reason)
        end
      end

      private

      def forked? = Process.pid != @pid

      def held_for(now)
        return NOT_TOLD unless Events.listened?(:release)

        @mutex.synchronize { @reported ? NOT_TOLD : { held: now - @granted_at } }
      end

      def done? = DONE.include?(@holder.state)

      def expires_at = @holder.confirmed_at + @holder.cadence.ttl

      def at_now
        now = @calls.clock.now
        @mutex.synchronize do
          lapse(now)
          yield now
        end
      end

      # Expires the hold if its TTL ran out by `now`; @return [Float] when it runs out (or ran out)
      def lapse(now, forked = forked?)
        expires_at = self.expires_at
        return expires_at if @finished || forked || done? || now < expires_at

        expire(@holder.renewal_allowed?(expires_at) ? :ttl_elapsed : :max_hold)
        expires_at
      end

      def expire(reason)
        return false unless @holder.expire

        @reason ||= reason
        @lapsed = true
      end

      def report_loss
        reason = @mutex.synchronize do
          next if @reported || !done? || forked?

          @reported = true
          @reason
        end
        return unless reason

        @calls.emit(:lost, self, status: state, reason: reason, held: @calls.clock.now - @granted_at)
        @callbacks.call(:lost, self)
        thread = @mutex.synchronize { @thread_to_interrupt }
        thread&.raise(interrupt_error) unless thread.equal?(Thread.current)
      end

      def lost_error(now)
        state, reason = if forked? then %i[expired forked]
                        elsif @released then %i[released released]
                        elsif done? then [@holder.state, @reason]
                        elsif @holder.at_risk?(now) then [:at_risk, nil]
                        end
        state && LeaseLost.new(resource: @resource, token: @holder.token, state: state, reason: reason)
      end
    end
  end
end
