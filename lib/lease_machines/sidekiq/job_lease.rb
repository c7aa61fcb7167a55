# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `lease` inside a Sidekiq job: the running job's {Runtime::Held}, set
    # by the server middleware (nil for a job that declares none).
    module JobLease
      attr_writer :lease

      def lease
        @lease || LeaseMachines.current_lease
      end
    end
  end
end
