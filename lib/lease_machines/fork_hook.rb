# frozen_string_literal: true

module LeaseMachines
  # The gem's one hook on `Process._fork`, which every way of forking goes
  # through (Ruby 3.1 and later): in the child, right after the fork, it runs
  # what each part of the gem registered with {.in_child}, in that order (the
  # stores' and fences' connections are let go, the runtime's schedulers
  # forgotten).
  module ForkHook
    @in_child = []

    # @yield in every forked child, before it runs anything else of the caller
    def self.in_child(&block)
      @in_child << block
    end

    # @api private
    def self.run_in_child
      @in_child.each(&:call)
    end

    # Prepended to Process's singleton class.
    module Fork
      def _fork
        pid = super
        ForkHook.run_in_child if pid.zero?
        pid
      end
    end

    Process.singleton_class.prepend(Fork)
  end
end
