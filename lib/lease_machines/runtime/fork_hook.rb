# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  # In a forked child the parent's schedulers are forgotten: no renewal thread there for the parent's leases.
  module Runtime
    ForkHook.in_child { Scheduler.forget_all }
  end
end
