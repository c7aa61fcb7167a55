# frozen_string_literal: true

require "sidekiq"
require "lease_machines"
require_relative "jobs"
require_relative "sidekiq/server_middleware"
require_relative "sidekiq/client_middleware"
require_relative "sidekiq/job_lease"
require_relative "sidekiq/lease_declaration"

module LeaseMachines
  # Sidekiq jobs that hold a lease while they run (docs/JOBS.md). Only
  # Sidekiq's public API is used: 6.4 (Sidekiq::Worker), 7 and 8.
  module Sidekiq
    # Where a declaration made before `require "lease_machines/sidekiq"` is
    # kept once checked (it is in Sidekiq's options, see {LeaseDeclaration}).
    LATE = :@lease_machines_late_option
    # The older `on_occupied` name kept on Sidekiq, and the `on_conflict` it means.
    ALIASES = { skip: :discard }.freeze

    class << self
      # @return [Jobs::LeaseOption, nil] the job class's declaration
      def lease_option(job_class)
        option = job_class.respond_to?(:lease_machines_option) ? job_class.lease_machines_option : nil
        return option unless option.nil?
        return job_class.instance_variable_get(LATE) if job_class.instance_variable_defined?(LATE)

        declared = job_class.respond_to?(:get_sidekiq_options) ? job_class.get_sidekiq_options["lease"] : nil
        job_class.instance_variable_set(LATE, declared && checked_option(declared, job_class))
      end

      # @return [Jobs::LeaseOption] a `sidekiq_options lease:` declaration, checked
      # @raise [ArgumentError, TypeError, RangeError] naming the class, the key and the value
      def checked_option(declared, job_class)
        Jobs::LeaseOption.new(declared, aliases: ALIASES, owner: "#{job_class} sidekiq_options lease")
      end
    end
  end
end

# Sidekiq::Job from 6.3 on (an alias of Sidekiq::Worker before 7). Ruby 3
# carries both into job classes that included it before this require.
(defined?(Sidekiq::Job) ? Sidekiq::Job : Sidekiq::Worker).then do |job|
  job.include(LeaseMachines::Sidekiq::JobLease)
  job::ClassMethods.prepend(LeaseMachines::Sidekiq::LeaseDeclaration)
end

# The client middleware goes in both: a server process enqueues jobs too.
Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add LeaseMachines::Sidekiq::ServerMiddleware }
  config.client_middleware { |chain| chain.add LeaseMachines::Sidekiq::ClientMiddleware }
end
Sidekiq.configure_client do |config|
  config.client_middleware { |chain| chain.add LeaseMachines::Sidekiq::ClientMiddleware }
end
