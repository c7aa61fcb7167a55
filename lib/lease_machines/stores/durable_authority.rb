# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A durable authority for one resource: the calls of
    # {LeaseMachines::Authority}, `now:` optional (the store's clock). Nothing
    # is kept here: every call is one committed transaction, its arguments
    # checked by a {Native::Request} before it starts.
    class DurableAuthority
      include Runtime::Holding::OnStoreClock # hold, hold! (docs/RUNTIME.md)

      # @return [Store]
      attr_reader :store
      # @return [String] the resource name
      attr_reader :name

      # Use {Store#authority}.
      def initialize(store, name)
        @store = store
        @name = name
        freeze
      end

      # @param label [String, nil] the holder's own words for itself (host,
      #   pid, job), kept with the lease it is granted for operators and never
      #   decided on ({HolderLabel.check}: at most 200 bytes of UTF-8)
      # @return [Decision]
      def acquire(owner:, ttl:, now: nil, label: nil)
        request = Native::Request.acquire(owner, now, ttl)
        @store.signed(@name, decide(request, HolderLabel.check(label)))
      end

      # @param label [String, nil] as {#acquire}'s
      # @return [Decision]
      def reacquire(owner:, ttl:, now: nil, label: nil)
        request = Native::Request.reacquire(owner, now, ttl)
        @store.signed(@name, decide(request, HolderLabel.check(label)))
      end

      # @return [Decision]
      def renew(owner:, token:, ttl:, now: nil)
        @store.signed(@name, decide(Native::Request.renew(owner, token, now, ttl)))
      end

      # @return [Decision]
      def release(owner:, token:, now: nil)
        decide(Native::Request.release(owner, token, now))
      end

      # See {Store#await_handover}.
      # @return [Boolean]
      def await_handover(seconds)
        @store.await_handover(@name, seconds)
      end

      # The committed state (read without taking the row lock).
      # @return [Checkpoint]
      def checkpoint
        @store.committed_checkpoint(@name)
      end

      # @return [Symbol] always `:clamp`
      def clock_policy
        :clamp
      end

      def inspect
        "#<#{self.class.name} name=#{@name.inspect} store=#{@store.class.name}>"
      end
      alias to_s inspect

      private

      def decide(request, label = nil)
        @store.ensure_durable
        @store.decide(@name, request, label)
      end
    end
  end
end
