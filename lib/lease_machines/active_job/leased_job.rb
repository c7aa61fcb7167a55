# frozen_string_literal: true

module LeaseMachines
  module ActiveJob
    # What a job includes: `leased` on the class, `lease` in the job, and the around_perform that holds it.
    module LeasedJob
      ALIASES = { retry: :reschedule }.freeze

      def self.included(job_class)
        job_class.extend(ClassMethods)
        job_class.around_perform { |job, block| job.__send__(:perform_under_lease, &block) }
        job_class.before_enqueue { |job| throw :abort if job.__send__(:skip_enqueue?) }
      end

      # `leased` and the declaration it keeps.
      module ClassMethods
        include Jobs::Declaration

        def leased(**options)
          @lease_machines_option = Jobs::LeaseOption.new(options, aliases: ALIASES, owner: "#{name} leased")
        end
      end

      def lease = @lease || LeaseMachines.current_lease

      private

      def lease_tags = { job: self.class.name.to_s, job_id: job_id.to_s }

      def skip_enqueue?
        option = self.class.lease_machines_option
        return false if option&.on_enqueue.nil? || executions.to_i.positive?

        Jobs::EnqueueCheck.skip?(option, option.resource_for(self), tags: lease_tags)
      end

      def perform_under_lease
        option = self.class.lease_machines_option
        return yield if option.nil?

        resource = option.resource_for(self)
        outcome = Jobs::LeasedRun.call(option, resource, tags: lease_tags) do |held|
          @lease = held
          yield
        ensure
          @lease = nil
        end
        return outcome.value if outcome.held?

        occupied(option, resource, outcome.decision)
      end

      def occupied(option, resource, decision)
        case option.on_conflict
        when :reschedule then retry_job(wait: option.reschedule_in * (1 + (rand / 5)))
        when :discard
          logger.info("lease_machines: discarded #{self.class.name} #{job_id}: #{resource} is held (#{decision.reason})")
        else raise Occupied.new(resource: resource, decision: decision)
        end
        nil
      end
    end
  end
end
