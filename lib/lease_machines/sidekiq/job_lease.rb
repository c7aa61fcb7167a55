# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `lease` inside a Sidekiq job: the held lease of the running job
    # (Runtime::Held: token, check!, at_risk?, lost?), set by the server
    # middleware; nil for a job that declares none. Included into
    # Sidekiq::Job (Sidekiq::Worker on 6.x) by `require "lease_machines/sidekiq"`.
    module JobLease
      attr_writer :lease

      def lease
        @lease || LeaseMachines.current_lease
      end
    end
  end
end
