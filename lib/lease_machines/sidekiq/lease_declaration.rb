# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
    # `sidekiq_options lease: {...}` on a job class: checked when the class
    # declares it (by {Jobs::LeaseOption}, as ActiveJob's `leased`), and kept
    # on the class instead of in Sidekiq's options, which Sidekiq copies into
    # every pushed job: the resource callable never reaches Redis. Prepended
    # to Sidekiq's job ClassMethods by `require "lease_machines/sidekiq"`.
    module LeaseDeclaration
      include Jobs::Declaration

      # Sidekiq's own, minus the `lease` key, which is checked and kept here.
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
