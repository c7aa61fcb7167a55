# frozen_string_literal: true

module LeaseMachines
  module Jobs
    # `on_enqueue: :skip_if_held`: a read of the store at enqueue, a load optimization only (the run's lease
    # keeps two runs apart).
    module EnqueueCheck
      def self.skip?(option, resource, tags:)
        return false unless option.on_enqueue == :skip_if_held && held?(option, resource)

        Events.emit(:enqueue_skipped, { resource: resource, owner: nil, token: nil, status: :held, reason: nil,
                                        duration: nil, tags: tags })
        true
      end

      def self.held?(option, resource)
        substitute = TestMode.current
        return substitute.held? if substitute

        store = option.store
        Array.new(option.limit) { |index| Runtime::Slots.slot_name(resource, index, option.limit) }
             .all? { |name| store.status(name)&.held? }
      rescue StoreError => e
        Logging.warning("lease_machines: on_enqueue could not read #{resource.inspect} (enqueued anyway): " \
                        "#{e.class}: #{e.message}")
        false
      end
    end
  end
end
