# frozen_string_literal: true

require "sidekiq"
require "lease_machines"
require_relative "jobs"
require_relative "sidekiq/server_middleware"
require_relative "sidekiq/client_middleware"
require_relative "sidekiq/job_lease"
require_relative "sidekiq/lease_declaration"

module LeaseMachines
  # Sidekiq jobs that hold a lease while they run (docs/JOBS.md), through Sidekiq's public API (6.4, 7, 8).
  module Sidekiq
    LATE = :@lease_machines_late_option
    ALIASES = { skip: :discard }.freeze

    class << self
      def lease_option(job_class)
        option = job_class.respond_to?(:lease_machines_option) ? job_class.lease_machines_option : nil
        return option unless option.nil?
        return job_class.instance_variable_get(LATE) if job_class.instance_variable_defined?(LATE)

        declared = job_class.respond_to?(:get_sidekiq_options) ? job_class.get_sidekiq_options["lease"] : nil
        job_class.instance_variable_set(LATE, declared && checked_option(declared, job_class))
      end

      def checked_option(declared, job_class)
        Jobs::LeaseOption.new(declared, aliases: ALIASES, owner: "#{job_class} sidekiq_options lease")
      end
    end
  end
end

(defined?(Sidekiq::Job) ? Sidekiq::Job : Sidekiq::Worker).then do |job|
  job.include(LeaseMachines::Sidekiq::JobLease)
  job::ClassMethods.prepend(LeaseMachines::Sidekiq::LeaseDeclaration)
end

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add LeaseMachines::Sidekiq::ServerMiddleware }
  config.client_middleware { |chain| chain.add LeaseMachines::Sidekiq::ClientMiddleware }
end
Sidekiq.configure_client { |config| config.client_middleware { |chain| chain.add LeaseMachines::Sidekiq::ClientMiddleware } }
