# frozen_string_literal: true

module LeaseMachines
  module Sidekiq
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
