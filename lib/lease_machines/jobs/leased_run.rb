# frozen_string_literal: true

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
  end
end
