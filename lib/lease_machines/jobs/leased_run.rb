# frozen_string_literal: true

# A job run under its lease, and LeaseMachines.current_lease: that lease.
module LeaseMachines
  module Jobs
    # Runs one job under the runtime's `hold`, its lease current to the job's fiber.
    module LeasedRun
      def self.call(option, resource, tags:)
        substitute = TestMode.current
        return substitute.hold(option, resource) { |held| Current.with(held) { yield held } } if substitute

        authority = option.store.authority(resource)
        authority.hold(owner: LeaseMachines.configuration.owner, ttl: option.ttl, wait: option.wait,
                       limit: option.limit, max_hold: option.max_hold, tags: tags) do |held|
          Current.with(held) { yield held }
        end
      end
    end

    # The lease of the job running on this fiber, restored when a job ends (an inline job gives the outer's back).
    module Current
      KEY = :lease_machines_current_lease

      def self.lease = Thread.current[KEY]

      def self.with(held)
        previous = Thread.current[KEY]
        Thread.current[KEY] = held
        yield
      ensure
        Thread.current[KEY] = previous
      end
    end
  end

  def self.current_lease = Jobs::Current.lease
end
