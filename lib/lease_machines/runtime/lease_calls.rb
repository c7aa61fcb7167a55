# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # Every call one `hold` makes to the authority, and the event each reports.
    class LeaseCalls
      # @return [#acquire] the authority
      attr_reader :authority
      # @return [String] the resource name (a slot's, under `limit:`)
      attr_reader :resource
      # @return [Integer] the slot's index (0 without `limit:`)
      attr_reader :slot
      # @return [Integer]
      attr_reader :owner
      # @return [Cadence]
      attr_reader :cadence
      # @return [#now, #now_ns, #sleep, #wait]
      attr_reader :clock
      # @return [Hash{Symbol => Object}, nil] the hold's `tags:`
      attr_reader :tags
      # @return [String, nil] the label each grant carries to the store ({Label})
      attr_reader :label

      # `decide` takes (operation, keywords) and calls the authority (with
      # `now:` on the caller's clock for an in-memory {Authority}).
      def initialize(authority:, resource:, owner:, cadence:, clock:, tags: nil, label: nil, slot: 0, &decide) # rubocop:disable Metrics/ParameterLists -- one hold's parts
        @authority = authority
        @resource = resource
        @slot = slot
        @owner = owner
        @cadence = cadence
        @clock = clock
        @tags = tags
        @label = label
        @decide = decide
        freeze
      end

      # One acquire (or, after an outcome we could not learn, a reacquire: if
      # that acquire was granted, the lease is ours and is rotated). `waited`:
      # seconds since the hold's first attempt was sent, for the event.
      # @return [Decision]
      def acquire(reacquire: false, waited: 0.0)
        timed(:acquire, waited: waited, label: @label) do
          @decide.call(reacquire ? :reacquire : :acquire, owner: @owner, ttl: @cadence.ttl, label: @label)
        end
      end

      # One renewal: the Decision, or the StoreError it failed with.
      def renew(held, token, late:)
        timed(:renew, held, late: late) { @decide.call(:renew, owner: @owner, token: token, ttl: @cadence.ttl) }
      rescue StoreError => e
        e
      end

      # The store that may renew this hold together with others in one
      # transaction ({RenewalBatch}): its authority's; nil for an in-memory
      # {Authority} (renewed alone).
      def batch_store
        @authority.store if @authority.respond_to?(:store)
      end

      # This hold's renewal as {Stores::BatchRenewal#renew_all} takes it.
      def renewal(token)
        { name: @authority.name, owner: @owner, token: token, ttl: @cadence.ttl }
      end

      # The event of a renewal a batch decided ({RenewalBatch}): #renew's,
      # timed from the batch's start. `result`: a Decision or the StoreError.
      def renewed(held, result, started:, late:)
        return unless Events.listened?

        if result.is_a?(StoreError)
          failed(:renew, held, result, started, late: late)
        else
          decided(:renew, held, result, started, late: late)
        end
      end

      # Releases; a failure is reported (event and warning), never raised.
      # `fields`: more of the event's payload (`held:`, the seconds it was held).
      def release(held, **fields)
        decision = timed(:release, held, **fields) { @decide.call(:release, owner: @owner, token: held.token) }
        return if decision.released?

        Logging.warning("lease_machines: releasing #{subject} (token #{held.token}) was refused: #{decision.reason}")
      rescue StoreError => e
        Logging.warning("lease_machines: releasing #{subject} (token #{held.token}) failed: #{e.class}: #{e.message}")
      end

      # @return [String] the resource and the tags, as log lines show them
      def subject
        Logging.subject(@resource, @tags)
      end

      # Reports an event about `held` (see {Events}).
      def emit(name, held, **fields)
        return unless Events.listened?

        payload = { resource: @resource, owner: @owner, token: held&.token, status: nil, reason: nil, duration: nil }
        payload[:tags] = @tags if @tags
        Events.emit(name, payload.merge(fields))
      end

      private

      def timed(name, held = nil, **fields)
        return yield unless Events.listened?

        started = MonotonicClock.now
        begin
          decision = yield
        rescue StoreError => e
          failed(name, held, e, started, **fields)
          raise
        end
        decided(name, held, decision, started, **fields)
        decision
      end

      def decided(name, held, decision, started, **fields)
        emit(name, held, token: decision.lease&.token || held&.token, status: decision.status,
                         reason: decision.reason, duration: MonotonicClock.now - started, **fields)
      end

      def failed(name, held, error, started, **fields)
        emit(name, held, status: :failed, reason: error.is_a?(OutcomeUnknownError) ? :outcome_unknown : :store_error,
                         error: error, duration: MonotonicClock.now - started, **fields)
      end
    end
  end
end
