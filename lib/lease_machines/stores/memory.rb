# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A store in this process's memory, for tests and single-process tools:
    # thread-safe, deciding through the same code as the durable engines
    # ({Store#decide}). Not durable; a forked child works on its own copy.
    class Memory < Store
      # @return [Database]
      attr_reader :database

      # @param database [Database] the rows (a new, empty one by default)
      # @param clock [#now_ns, #wait] used only when `database` is not given
      # @param signing_keys [Array<String>, nil] as the durable stores' (granted
      #   leases carry their token's proof)
      # @param tokens [Symbol] `:sequence` (default) or `:clock_floor`, as the
      #   durable stores'
      # rubocop:disable Metrics/ParameterLists -- keywords, each one option
      def initialize(database: nil, clock: WallClock, before_commit: nil, signing_keys: nil, tokens: :sequence,
                     durability: nil)
        super(before_commit: before_commit, signing_keys: signing_keys, tokens: tokens, durability: durability)
        unless database.nil? || database.is_a?(Database)
          raise TypeError, "database must be a LeaseMachines::Stores::Memory::Database, got #{database.inspect}"
        end

        @database = database || Database.new(clock: clock)
      end
      # rubocop:enable Metrics/ParameterLists

      # @return [#now_ns] the store clock
      def clock
        @database.clock
      end

      # Nothing to create.
      # @return [self]
      def setup!
        self
      end

      # Nothing to close. @return [nil]
      def close
        nil
      end

      # @api private
      def transaction(&)
        @database.transaction(&)
      end

      # @api private: the clock in whole milliseconds
      def clock_ms
        @database.clock_ms
      end

      # @api private: rows in memory always keep the holder's label.
      def labelled?
        true
      end

      # @return [Durability] in memory: nothing survives the process
      def durability
        Durability.new(engine: "Memory", verdict: :in_memory, settings: {}, reasons: ["Stores::Memory"])
      end

      private

      def inspect_source
        "resources=#{@database.size}"
      end

      # Waits on the store clock until a lease of one of `names` is released.
      def handover_wait(names, seconds)
        @database.await_release(names, seconds)
      end

      def read_status(name)
        row, clock = @database.read(name)
        row && build_status(name, row.columns, row.updated_at, clock, row.label)
      end

      # `wanted`: the names to keep (a Hash of them), nil for all.
      def read_statuses(wanted = nil)
        rows, clock = @database.read_all
        rows = rows.select { |(name, _row)| wanted.key?(name) } if wanted
        readable_statuses(rows, name_at: 0) do |(name, row)|
          build_status(name, row.columns, row.updated_at, clock, row.label)
        end
      end

      def read_statuses_of(names)
        read_statuses(names.to_h { |name| [name, true] })
      end

      def read_names
        @database.read_all.first.map(&:first)
      end
    end
  end
end

require_relative "memory/wall_clock"
require_relative "memory/database"
require_relative "memory/transaction"
