# frozen_string_literal: true

module LeaseMachines
  module Jobs
    # Where a job class keeps its lease declaration (`@lease_machines_option`, set by ActiveJob's `leased` or
    # Sidekiq's `sidekiq_options lease:`), and how a subclass inherits it.
    module Declaration
      def lease_machines_option
        return @lease_machines_option if instance_variable_defined?(:@lease_machines_option)

        superclass.respond_to?(:lease_machines_option) ? superclass.lease_machines_option : nil
      end
    end
  end
end
