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

    # Several renewals in one transaction, one COMMIT (included by {Store}; docs/RUNTIME.md, "The renewal thread").
    module BatchRenewal
      # Renews several leases in one transaction, all or nothing: a failure is every renewal's answer, a
      # refusal is that renewal's Decision. @return [Array<Decision>] one per renewal, in the order given
      def renew_all(renewals)
        batch = Renewals.new(renewals)
        return [] if batch.empty?

        ensure_durable
        decisions = decide_all(batch)
        batch.names.zip(decisions).map { |name, decision| signed(name, decision) }
      end

      # @api private: the batch's one transaction (an engine wraps it as it wraps #decide).
      def decide_all(batch)
        label = stored_label(nil)
        transaction do |tx|
          tx.lock_all(batch.locking_order) if tx.respond_to?(:lock_all)
          # Without a hook (which may read the rows) an engine may write them all at the end.
          tx.defer_writes if before_commit.nil? && tx.respond_to?(:defer_writes)
          decisions = batch.names.zip(batch.requests).map { |name, request| decided_in(tx, name, request, label) }
          tx.write_deferred if tx.respond_to?(:write_deferred)
          decisions
        end
      end

      # @api private: what a server engine's locked transaction shares to write a batch's rows at its end, in as
      # few statements as the engine needs. The engine gives #write_rows(rows) ({name => columns}, each name once):
      # the rows its statements changed.
      module DeferredWrites
        # From now on a write that keeps the label (a renewal always does) waits for #write_deferred.
        def defer_writes = (@deferred = {})

        def write_deferred
          return if @deferred.nil? || @deferred.empty?

          rows = @deferred
          @deferred = {}
          changed = write_rows(rows)
          return if changed == rows.size

          raise @failures.problem("updating #{rows.size} rows together changed #{changed}")
        end

        private

        # A row asked for again is written first: it reads what was decided.
        def written_before_read(name) = (write_deferred if @deferred&.key?(name))

        # Whether the write of `name` waits for #write_deferred.
        def deferred(name, columns, label)
          return false unless @deferred && label == HolderLabel::KEEP

          @deferred[name] = columns
          true
        end
      end
    end
  end
end
