# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # One lease held by `hold`: what the block is given. Its {Holder} decides
    # every state, on the runtime's clock, behind a Mutex shared with the
    # renewal thread ({Renewal}). Every reader reads the clock when called,
    # so a pause (GC, SIGSTOP) past the TTL reads as lost at once.
    class Held
      include Renewal

      NOT_TOLD = {}.freeze
      # The reasons of {#fenced!}.
      FENCED = %i[fenced reissued].freeze

      # @return [String] the resource name: under `limit:`, the slot's
      #   (`"#{resource}#slot-#{slot}"`, see {Slots}), which a fence per slot is keyed on
      attr_reader :resource
      # @return [Integer]
      attr_reader :owner

      # @api private (made by `hold`)
      def initialize(calls:, lease:, sent_at:, cadence:, callbacks:)
        @calls = calls
        @resource = calls.resource
        @owner = lease.owner
        @lease = lease
        @holder = Holder.new(token: lease.token, at: sent_at, cadence: cadence)
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
        @thread = nil
      end

      # @return [Integer] the slot held under `limit:` (0...limit; 0 without it)
      def slot
        @calls.slot
      end

      # @return [Hash{Symbol => Object}, nil] the hold's `tags:` (a job's class and id)
      def tags
        @calls.tags
      end

      # @return [String] the resource and its tags, as log lines show them @api private
      def subject
        @calls.subject
      end

      # @return [Integer] the fencing token to show the protected resource
      def token
        @mutex.synchronize { @holder.token }
      end

      # @return [Lease] the latest lease the authority confirmed
      def lease
        @mutex.synchronize { @lease }
      end

      # @return [Symbol] `:confirmed`, `:unconfirmed`, `:at_risk`, `:expired`
      #   or `:fenced` (see {Holder}); `:released` once the hold ended
      #   holding the lease; `:expired` in a forked child
      def state
        return :expired if forked?

        at_now { @released ? :released : @holder.state }
      end

      # @return [Symbol, nil] why the lease was lost (see {LeaseLost#reason})
      def reason
        return :forked if forked?

        at_now { @released ? :released : @reason }
      end

      # @return [Boolean] past the warning deadline on the holder's clock,
      #   lost, or released
      def at_risk?
        return true if forked?

        at_now { |now| @released || @holder.at_risk?(now) }
      end

      # @return [Boolean] the authority said the lease is gone, the TTL passed
      #   with no confirmation, the resource refused the token, or the hold
      #   ended
      def lost?
        return true if forked?

        at_now { @released || done? }
      end

      # Seconds until the lease runs out by the holder's clock, counted from
      # the instant the last confirmed request was sent (0.0 once lost or
      # released).
      # @return [Float]
      def remaining
        return 0.0 if forked?

        at_now { |now| @released || done? ? 0.0 : [expires_at - now, 0.0].max }
      end

      # Raises {LeaseLost} once the holder is at risk, expired, fenced or
      # released. @return [self]
      def check!
        error = at_now { |now| lost_error(now) }
        raise error if error

        self
      end

      # Tells the holder that the protected resource refused its token (a
      # {FencedError}): terminal. A loss already reported is not reported
      # again. `reason`: `:fenced`, or `:reissued` when the fence saw the
      # token written by another owner ({ReissuedTokenError}).
      # @return [Boolean] whether this changed the state
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

      def inspect
        "#<#{self.class.name} resource=#{@resource.inspect} owner=#{@owner} token=#{token} state=#{state.inspect}>"
      end
      alias to_s inspect

      # @api private: called by `hold` when the block has ended: no renewal starts after
      # this. Released unless it ran out (a fenced lease may still be held at
      # the authority, and releasing it lets the next holder in at once).
      def finish
        now = @calls.clock.now
        release = @renewing.synchronize do
          @mutex.synchronize do
            lapse(now)
            @finished = true
            @thread = nil
            @released = !done?
            !@lapsed && now < expires_at
          end
        end
        report_loss
        @calls.release(self, **held_for(now)) if release && !forked?
      end

      # `interrupt: true`: the block's thread gets {LeaseLost} when the lease is lost.
      def interrupt(thread)
        @mutex.synchronize { @thread = thread }
      end

      # One instance: `hold` tells it from an error of the block's own.
      def interrupt_error
        @mutex.synchronize do
          @interrupt_error ||= LeaseLost.new(resource: @resource, token: @holder.token, state: @holder.state,
                                             reason: @reason)
        end
      end

      private

      def forked?
        Process.pid != @pid
      end

      # The release's `held:` (seconds since the grant), unless the loss
      # already reported it: one `held:` per hold, on the event that ends it.
      # Nothing is read when nobody listens.
      def held_for(now)
        return NOT_TOLD unless Events.listened?

        @mutex.synchronize { @reported ? NOT_TOLD : { held: now - @granted_at } }
      end

      def done?
        %i[expired fenced].include?(@holder.state)
      end

      def expires_at
        @holder.confirmed_at + @holder.cadence.ttl
      end

      # Yields the clock's reading inside @mutex, after lapsing an expired lease.
      def at_now
        now = @calls.clock.now
        @mutex.synchronize do
          lapse(now)
          yield now
        end
      end

      # Inside @mutex: the whole TTL passed on the holder's clock with no
      # confirmation (never once the hold ended, nor in a forked child):
      # `:max_hold` when renewals had ended before the lease ran out.
      # @return [Boolean] whether the lease was lost now
      def lapse(now)
        return false if @finished || forked? || done? || now < expires_at

        expire(@holder.renewal_allowed?(expires_at) ? :ttl_elapsed : :max_hold)
      end

      # Inside @mutex: the lease ran out, or the authority said it is gone.
      def expire(reason)
        return false unless @holder.expire

        @reason ||= reason
        @lapsed = true
      end

      # Reports the loss once: event, `on_lost`, and LeaseLost into the block's thread.
      def report_loss
        reason = @mutex.synchronize do
          next if @reported || !done? || forked?

          @reported = true
          @reason
        end
        return unless reason

        @calls.emit(:lost, self, status: state, reason: reason, held: @calls.clock.now - @granted_at)
        @callbacks.call(:lost, self)
        thread = @mutex.synchronize { @thread }
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
