# frozen_string_literal: true

module LeaseMachines
  # See runtime.rb.
  module Runtime
    # Prepended to Process's singleton class where `Process._fork` exists
    # (Ruby >= 3.1; every way of forking goes through it): in the child, the
    # parent's schedulers are forgotten, so no renewal thread is started there
    # for the parent's leases. (Each {Held} also compares its pid, so it reads
    # as lost in a child however the child was made.)
    module ForkHook
      def _fork
        pid = super
        Scheduler.forget_all if pid.zero?
        pid
      end
    end

    Process.singleton_class.prepend(ForkHook) if Process.respond_to?(:_fork)
  end
end
