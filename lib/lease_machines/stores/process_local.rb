# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  module Stores
    # A resource this process opened, opened again in a forked child, which never uses or closes the one
    # it inherited (that would end the parent's session). Not thread-safe: the caller holds a lock.
    class ProcessLocal
      # @api private: in a forked child, every ProcessLocal lets go of what it inherited. A heap walk, not a
      # registry: Ruby 3.1's WeakMap#each_key yielded other objects here.
      def self.inherit_all = ObjectSpace.each_object(ProcessLocal) { |local| local.send(:keep_inherited) }

      # `inherited`: called in a child with the inherited resource, once (say, to silence its finalizer).
      def initialize(inherited: nil, &open)
        @open = open
        @on_inherit = inherited
        @resource = nil
        @pid = nil
        @inherited = []
      end

      def current
        return @resource if @pid == Process.pid

        keep_inherited
        @resource = @open.call
        @pid = Process.pid
        @resource
      end

      # Yields the resource to be closed when this process opened it (a parent's is kept), then forgets it.
      def close
        yield @resource if @resource && @pid == Process.pid
        keep_inherited
      end

      private

      def keep_inherited
        if @resource && @pid != Process.pid
          @on_inherit&.call(@resource)
          @inherited << @resource
        end
        @resource = nil
        @pid = nil
      end

      ForkHook.in_child { inherit_all }
    end
  end
end
