# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold` and `hold!`: run a block under a lease (docs/RUNTIME.md).
    # Included by every authority through {OnCallerClock} or {OnStoreClock}.
    module Holding
      # Acquires (waiting up to `wait` seconds), runs the block with a {Held}
      # while the renewal thread keeps the lease alive, and releases however it ends.
      # @param owner [Integer] who holds (default {LeaseMachines.owner_id}:
      #   this host, process and thread)
      # @param ttl [Numeric] seconds each grant and renewal asks for
      # @param wait [Numeric] seconds to keep trying while occupied (0: once)
      # @param renew_after [Numeric, nil] default ttl / 3
      # @param warn_before [Numeric, nil] default ttl / 4
      # @param max_hold [Numeric, ActiveSupport::Duration, nil] seconds after
      #   the grant when renewals end (at least `ttl`): the lease then runs out
      #   at its TTL and is lost (`:max_hold`); nil: renewed until the block ends
      # @param on_at_risk [#call, nil] called with the Held when it becomes at risk
      # @param on_lost [#call, nil] called with the Held when it is lost
      # @param interrupt [Boolean] raise {LeaseLost} into the block's thread
      #   when the lease is lost (see docs/RUNTIME.md for the caveats)
      # @param clock [#now, #now_ns, #sleep, #wait] the holder's clock
      # @param tags [Hash{Symbol => String, Symbol, Integer}, nil] shown in the
      #   hold's log lines and given to its events (`tags:`), e.g. a job's class and id
      # @param label [String, nil] the holder's own words for itself, kept by
      #   a store with each grant for operators, never decided on (at most
      #   200 bytes of UTF-8; {Stores::HolderLabel}); nil: "host pid 4242"
      #   and the `tags:` ({Label.default})
      # @param limit [Integer] holders at once (1..{Slots::MAX}): above 1, the
      #   hold takes any free one of `limit` slot leases ({Slots}; a durable
      #   authority only), and the Held tells its `slot` and `resource`
      # @return [Outcome] held? and the block's value, or the last decision
      # @raise [StoreError] when the store failed on the last attempt
      def hold(ttl:, owner: LeaseMachines.owner_id, wait: 0, renew_after: nil, warn_before: nil, # rubocop:disable Metrics/ParameterLists -- the keywords of docs/RUNTIME.md
               on_at_risk: nil, on_lost: nil, interrupt: false, clock: MonotonicClock, tags: nil, label: nil, limit: 1,
               max_hold: nil, &block)
        raise ArgumentError, "hold needs a block" unless block

        callbacks = Callbacks.new(on_at_risk: on_at_risk, on_lost: on_lost)
        cadence = Holding.cadence(ttl, renew_after, warn_before, max_hold)
        tags = Holding.tags(tags)
        identity = { tags: tags, label: Label.for(label, tags) }
        calls = lease_calls(owner, cadence, clock, identity, Slots.check(limit))
        HoldCall.new(calls, wait: wait, interrupt: interrupt, callbacks: callbacks).run(&block)
      end

      # Like {#hold}, but returns the block's value, and raises {Occupied}
      # (with the last decision) when the lease could not be acquired.
      def hold!(**options, &)
        outcome = hold(**options, &)
        raise Occupied.new(resource: hold_resource, decision: outcome.decision) unless outcome.held?

        outcome.value
      end

      # The Cadence of a hold, defaults derived from `ttl`. A timing that
      # cannot fit `ttl` raises naming itself; two that do not fit each other
      # are refused by {Cadence}, a `max_hold` below `ttl` by the core. @api private
      def self.cadence(ttl, renew_after, warn_before, max_hold = nil)
        Seconds.check(:ttl, ttl, positive: true)
        Seconds.optional(:renew_after, renew_after, positive: true)
        Seconds.optional(:warn_before, warn_before, positive: false)
        max_hold = Seconds.optional(:max_hold, Seconds.plain(max_hold), positive: true)
        raise ArgumentError, "renew_after must be at most ttl (#{ttl}), got #{renew_after}" if renew_after&.>(ttl)
        raise ArgumentError, "warn_before must be less than ttl (#{ttl}), got #{warn_before}" if warn_before&.>=(ttl)

        renew_after ||= warn_before ? [ttl / 3.0, ttl - warn_before].min : ttl / 3.0
        warn_before ||= [ttl / 4.0, ttl - renew_after].min
        Cadence.new(ttl: ttl, renew_after: renew_after, warn_before: warn_before, max_hold: max_hold)
      end

      # @return [Hash, nil] `tags`, checked and frozen. @api private
      def self.tags(tags)
        return nil if tags.nil?

        valid = tags.is_a?(Hash) && tags.all? do |key, value|
          key.is_a?(Symbol) && (value.is_a?(String) || value.is_a?(Symbol) || value.is_a?(Integer))
        end
        raise TypeError, "tags must be a Hash of Symbol => String, Symbol or Integer, got #{tags.inspect}" unless valid

        tags.transform_values { |value| value.is_a?(String) ? -value : value }.freeze
      end

      private

      # @return [Array<LeaseCalls>] one per slot (one for a limit of 1: this authority's)
      # `identity`: the hold's tags and label.
      def lease_calls(owner, cadence, clock, identity, limit)
        unless %i[now now_ns sleep wait].all? { |call| clock.respond_to?(call) }
          raise TypeError, "clock must respond to #now, #now_ns, #sleep and #wait, got #{clock.inspect}"
        end

        Array.new(limit) do |index|
          authority = limit == 1 ? self : hold_slot(index, limit)
          LeaseCalls.new(authority: authority, resource: Slots.slot_name(hold_resource, index, limit), slot: index,
                         owner: owner, clock: clock, cadence: cadence, **identity) do |operation, **arguments|
            authority.__send__(:hold_decide, operation, clock, **arguments)
          end
        end
      end

      # For an in-memory {Authority}: every call is told `now:` on the
      # hold's clock.
      module OnCallerClock
        include Holding

        private

        # (The label is a store's: an in-memory Authority keeps none.)
        def hold_decide(operation, clock, label: nil, **arguments) # rubocop:disable Lint/UnusedMethodArgument -- see above
          public_send(operation, now: clock.now, **arguments)
        end

        def hold_resource
          "authority 0x#{object_id.to_s(16)}"
        end

        def hold_slot(_index, limit)
          raise ArgumentError, "limit: #{limit} (above 1) needs a store's authority (store.authority(name)), " \
                               "whose name names the slots; an in-memory Authority has none"
        end
      end

      # For a {Stores::DurableAuthority}: the store's clock decides.
      module OnStoreClock
        include Holding

        private

        def hold_decide(operation, _clock, **arguments)
          public_send(operation, **arguments)
        end

        def hold_resource
          name
        end

        # The slot's authority, on the same store (its name checked there).
        def hold_slot(index, limit)
          store.authority(Slots.slot_name(name, index, limit))
        end
      end
    end
  end
end
