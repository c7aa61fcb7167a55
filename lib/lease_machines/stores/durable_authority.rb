# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A durable authority for one resource: the calls of {LeaseMachines::Authority}, `now:` optional;
    # every call is one committed transaction.
    class DurableAuthority
      include Runtime::Holding::OnStoreClock # hold, hold! (docs/RUNTIME.md)

      attr_reader :store, :name

      def initialize(store, name)
        @store = store
        @name = name
        freeze
      end

      # `label`: the holder's own words, kept with the lease for operators ({HolderLabel.check}).
      def acquire(owner:, ttl:, now: nil, label: nil) = granted(Native::Request.acquire(owner, now, ttl), label)
      def reacquire(owner:, ttl:, now: nil, label: nil) = granted(Native::Request.reacquire(owner, now, ttl), label)

      def renew(owner:, token:, ttl:, now: nil) = @store.signed(@name, decide(Native::Request.renew(owner, token, now, ttl)))
      def release(owner:, token:, now: nil) = decide(Native::Request.release(owner, token, now))
      def await_handover(seconds) = @store.await_handover(@name, seconds)

      def checkpoint = @store.committed_checkpoint(@name)
      def clock_policy = :clamp
      def inspect = "#<#{self.class.name} name=#{@name.inspect} store=#{@store.class.name}>"
      alias to_s inspect

      private

      def granted(request, label) = @store.signed(@name, decide(request, HolderLabel.check(label)))

      def decide(request, label = nil)
        @store.ensure_durable
        @store.decide(@name, request, label)
      end
    end
  end
end
