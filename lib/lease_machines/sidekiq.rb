# frozen_string_literal: true

require "sidekiq"
require "lease_machines"
require_relative "jobs"
require_relative "sidekiq/server_middleware"
require_relative "sidekiq/client_middleware"

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

    # `sidekiq_options lease:`, checked when declared and kept on the class: the resource callable never reaches Redis.
    module LeaseDeclaration
      include Jobs::Declaration

      def sidekiq_options(opts = {})
        opts = opts.transform_keys(&:to_s)
        if opts.key?("lease")
          declared = opts.delete("lease")
          @lease_machines_option = declared.nil? ? nil : Sidekiq.checked_option(declared, self)
        end
        super(opts)
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
