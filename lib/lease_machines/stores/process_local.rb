# frozen_string_literal: true

require_relative "../fork_hook"

module LeaseMachines
  module Stores
    # A resource this process opened (a store's or a fence's own database
    # connection): opened on first use, and again in a forked child. A child
    # never touches the one it inherited: it does not use it, close it or
    # even let it be finalized (it stays referenced here for as long as the
    # child runs), because that would end the parent's session (PostgreSQL)
    # or upset its locks (SQLite). Ruby still finalizes every object when the
    # child exits (`exit`, not `exit!`): an engine whose finalizer writes to
    # the parent's socket silences it (`inherited:`), in the child right
    # after the fork ({ForkHook}), so also in a child that never uses it. Fork
    # while no call is in flight on it.
    #
    # Not thread-safe: the caller serializes its use (every source holds a
    # lock around it).
    class ProcessLocal
      # @api private: in a forked child (see {ForkHook}), every ProcessLocal
      # lets go of what it inherited at once. Found by a walk of
      # the heap, once per fork (about 2 ms for 200,000 objects): a registry
      # would have to hold them weakly, and Ruby 3.1's WeakMap#each_key
      # yielded other objects (Integers, Strings) here.
      def self.inherit_all
        ObjectSpace.each_object(ProcessLocal) { |local| local.send(:keep_inherited) }
      end

      # @param inherited [#call, nil] called, in a child, with the resource
      #   it inherited from its parent, once, before the child opens its own
      #   (say, to silence what finalizing it at exit would send)
      # @yieldreturn the resource, newly opened (the block may raise; the next
      #   use tries again)
      def initialize(inherited: nil, &open)
        @open = open
        @on_inherit = inherited
        @resource = nil
        @pid = nil
        @inherited = []
      end

      # @return this process's resource, opened now when it has none yet
      def current
        return @resource if @pid == Process.pid

        keep_inherited
        @resource = @open.call
        @pid = Process.pid
        @resource
      end

      # Yields the resource to be closed when this process opened it (a
      # parent's is kept untouched), then forgets it: the next use opens a new
      # one.
      def close
        if @resource && @pid == Process.pid
          yield @resource
          @resource = nil
          @pid = nil
        else
          keep_inherited
        end
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
