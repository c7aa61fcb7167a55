# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `lease` inside a Sidekiq job: its {Runtime::Held}, set by the server middleware (nil when it declares none).
    module JobLease
      attr_writer :lease

      def lease
        held = @lease || LeaseMachines.current_lease
        return held if held || Sidekiq.lease_option(self.class).nil?

        raise NotLeasedError,
              "#{self.class} declares a lease, but its perform was called directly, outside the middleware that " \
              "holds it: run it through Sidekiq (perform_inline, or Sidekiq::Testing's inline! or drain with " \
              "require \"lease_machines/sidekiq/testing\"), docs/JOBS.md"
      end
    end
  end
end
