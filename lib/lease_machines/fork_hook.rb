# frozen_string_literal: true

module LeaseMachines
  # The gem's one hook on `Process._fork` (every fork goes through it): the child runs what {.in_child} registered.
  module ForkHook
    @in_child = []

    def self.in_child(&block) = @in_child << block

    def self.run_in_child = @in_child.each(&:call)

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
