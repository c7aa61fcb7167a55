# frozen_string_literal: true

require "sidekiq"
require "lease_machines"
require_relative "jobs"
require_relative "sidekiq/server_middleware"
require_relative "sidekiq/job_lease"

module LeaseMachines
  # Sidekiq jobs that hold a lease while they run (docs/JOBS.md). Only
  # Sidekiq's public API is used: 6.4 (Sidekiq::Worker), 7 and 8.
  module Sidekiq
    CACHE = :@lease_machines_lease_option

    class << self
      # @return [Jobs::LeaseOption, nil] the job class's declaration, checked
      #   on first use and kept on the class
      def lease_option(job_class)
        return job_class.instance_variable_get(CACHE) if job_class.instance_variable_defined?(CACHE)

        declared = job_class.get_sidekiq_options["lease"]
        option = declared && Jobs::LeaseOption.new(declared, choices: ServerMiddleware::CHOICES,
                                                             default_on_occupied: :reschedule,
                                                             owner: "#{job_class} sidekiq_options lease")
        job_class.instance_variable_set(CACHE, option)
      end
    end
  end
end

# Sidekiq::Job from 6.3 on (an alias of Sidekiq::Worker before 7).
(defined?(Sidekiq::Job) ? Sidekiq::Job : Sidekiq::Worker).include(LeaseMachines::Sidekiq::JobLease)

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add LeaseMachines::Sidekiq::ServerMiddleware }
end
