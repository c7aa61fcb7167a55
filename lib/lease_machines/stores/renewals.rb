# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The leases one {Store#renew_all} renews, each checked before any I/O:
    # its name by {Stores.resource_name}, its owner, token and ttl by the
    # {Native::Request} a single renew would build. A bad entry raises the
    # error its single renew would, its message prefixed with its index.
    class Renewals
      KEYS = %i[name owner token ttl].freeze

      # @return [Array<String>] each renewal's resource name, in the caller's order
      attr_reader :names
      # @return [Array<Native::Request>] each renewal's request, in the caller's order
      attr_reader :requests

      # @param renewals [Array<Hash>] `{ name:, owner:, token:, ttl: }` each
      def initialize(renewals)
        unless renewals.is_a?(Array)
          raise TypeError, "renewals must be an Array of Hashes (name:, owner:, token:, ttl:), " \
                           "got #{Stores.described(renewals)}"
        end

        @names = []
        @requests = []
        renewals.each_with_index { |renewal, index| add(renewal, index) }
        @names.freeze
        @requests.freeze
        freeze
      end

      def empty?
        @names.empty?
      end

      # The names in the order their rows are locked: sorted (by bytes), each
      # once, so that two processes' batches never wait for each other in a cycle.
      def locking_order
        @names.uniq.sort
      end

      private

      def add(renewal, index)
        unless renewal.is_a?(Hash)
          raise TypeError, "renewals[#{index}] must be a Hash (name:, owner:, token:, ttl:), got #{Stores.described(renewal)}"
        end
        unless renewal.size == KEYS.size && KEYS.all? { |key| renewal.key?(key) }
          raise ArgumentError, "renewals[#{index}] must have exactly the keys #{KEYS.join(', ')}, got #{renewal.keys.inspect}"
        end

        @names << Stores.resource_name(renewal[:name], argument: "renewals[#{index}][:name]")
        @requests << Native::Request.renew(renewal[:owner], renewal[:token], nil, renewal[:ttl])
      rescue TypeError, ArgumentError => e
        raise if e.message.start_with?("renewals[")

        raise e.class, "renewals[#{index}]: #{e.message}"
      end
    end
  end
end
