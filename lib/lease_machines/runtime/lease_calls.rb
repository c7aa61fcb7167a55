# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # Every call one `hold` makes to the authority, and the event each reports.
    class LeaseCalls
      attr_reader :authority, :resource, :slot, :owner, :cadence, :clock, :tags, :label

      def initialize(authority:, resource:, owner:, cadence:, clock:, tags: nil, label: nil, slot: 0) # rubocop:disable Metrics/ParameterLists -- one hold's parts
        @authority = authority
        @resource = resource
        @slot = slot
        @owner = owner
        @cadence = cadence
        @clock = clock
        @tags = tags
        @label = label
        freeze
      end

      def acquire(reacquire: false, waited: 0.0)
        timed(:acquire, waited: waited, label: @label) do
          decide(reacquire ? :reacquire : :acquire, { owner: @owner, ttl: @cadence.ttl, label: @label })
        end
      end

      def renew(held, token, late:)
        timed(:renew, held, late: late) { decide(:renew, { owner: @owner, token: token, ttl: @cadence.ttl }) }
      rescue StoreError => e
        e
      end

      # The store that renews this hold together with others due with it ({Stores::BatchRenewal#renew_all}), if any.
      def renewal_store = (@authority.store if @authority.respond_to?(:store))

      def renewal_request(token) = { name: @authority.name, owner: @owner, token: token, ttl: @cadence.ttl }

      def batch_renewed(held, result, started:, late:)
        return unless Events.listened?
        return failed(:renew, held, result, started, late: late) if result.is_a?(StoreError)

        decided(:renew, held, result, started, late: late)
      end

      def release(held, **fields)
        decision = timed(:release, held, **fields) { decide(:release, { owner: @owner, token: held.token }) }
        return if decision.released?

        Logging.warning("lease_machines: releasing #{subject} (token #{held.token}) was refused: #{decision.reason}")
      rescue StoreError => e
        Logging.warning("lease_machines: releasing #{subject} (token #{held.token}) failed: #{e.class}: #{e.message}")
      end

      def subject = Logging.subject(@resource, @tags)

      def emit(name, held, **fields)
        return unless Events.listened?

        payload = { resource: @resource, owner: @owner, token: held&.token, status: nil, reason: nil, duration: nil }
        payload[:tags] = @tags if @tags
        Events.emit(name, payload.merge(fields))
      end

      private

      # The authority's decision on the hold's clock ({Holding::OnCallerClock}, {Holding::OnStoreClock}).
      def decide(operation, arguments) = @authority.__send__(:hold_decide, operation, @clock, arguments)

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
