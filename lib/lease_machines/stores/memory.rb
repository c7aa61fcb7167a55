# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A store in this process's memory, for tests and single-process tools: thread-safe, deciding through
    # {Store#decide}. Not durable; a forked child works on its own copy.
    class Memory < Store
      attr_reader :database

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

      def clock = @database.clock
      def setup! = self
      def close = nil

      def transaction(&) = @database.transaction(&)

      def clock_ms = @database.clock_ms
      def labelled? = true
      def durability = Durability.new(engine: "Memory", verdict: :in_memory, settings: {}, reasons: ["Stores::Memory"])

      private

      def inspect_source = "resources=#{@database.size}"
      def handover_wait(names, seconds) = @database.await_release(names, seconds)

      def read_status(name)
        row, clock = @database.read(name)
        row && build_status(name, row.columns, row.updated_at, clock, row.label)
      end

      def read_statuses(wanted = nil)
        rows, clock = @database.read_all
        rows = rows.select { |(name, _row)| wanted.key?(name) } if wanted
        readable_statuses(rows, name_at: 0) do |(name, row)|
          build_status(name, row.columns, row.updated_at, clock, row.label)
        end
      end

      def read_statuses_of(names) = read_statuses(names.to_h { |name| [name, true] })
      def read_names = @database.read_all.first.map(&:first)

      # The default clock of {Memory}: the wall clock, read in whole milliseconds as the durable stores do.
      module WallClock
        module_function

        def now_ns = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond) * NANOS_PER_MILLISECOND

        def wait(mutex, condition, seconds)
          condition.wait(mutex, seconds) if seconds.positive?
        end
      end
    end
  end
end

require_relative "memory/database"
