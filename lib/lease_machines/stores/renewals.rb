# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The leases one {Store#renew_all} renews, each checked before any I/O as its single renew would be,
    # its error's message prefixed with its index.
    class Renewals
      KEYS = %i[name owner token ttl].freeze

      attr_reader :names, :requests

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

      def empty? = @names.empty?

      # Sorted, each once: two processes' batches never wait for each other in a cycle.
      def locking_order = @names.uniq.sort

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
