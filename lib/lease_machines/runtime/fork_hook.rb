# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  # See runtime.rb. In a forked child the parent's schedulers are forgotten,
  # so no renewal thread is started there for the parent's leases. (Each
  # {Runtime::Held} also compares its pid, so it reads as lost in a child
  # however the child was made.)
  module Runtime
    ForkHook.in_child { Scheduler.forget_all }
  end
end
