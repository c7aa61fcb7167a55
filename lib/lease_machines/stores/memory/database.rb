# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Memory < Store
      # The rows of one in-memory history, behind one Mutex; a write lands only when its block returns.
      class Database
        Row = Struct.new(:columns, :updated_at, :label)

        attr_reader :clock

        def initialize(clock: WallClock)
          unless clock.respond_to?(:now_ns) && clock.respond_to?(:wait)
            raise TypeError, "clock must respond to #now_ns and #wait, got #{clock.inspect}"
          end

          @clock = clock
          @rows = {}
          @mutex = Mutex.new
          @released = ConditionVariable.new
          @releases = Hash.new(0)
        end

        def transaction
          @mutex.synchronize do
            transaction = Transaction.new(self)
            result = yield transaction
            transaction.writes.each { |name, (columns, label)| store(name, columns, label) }
            result
          end
        end

        def clock_ms
          ns = @clock.now_ns
          unless ns.is_a?(Integer) && ns.between?(0, U64_MAX)
            raise TypeError, "clock.now_ns must return an Integer in 0..#{U64_MAX}, got #{ns.inspect}"
          end

          ns / NANOS_PER_MILLISECOND
        end

        def columns(name) = @rows[name]&.columns
        def read(name) = @mutex.synchronize { [@rows[name], clock_ms] }
        def read_all = @mutex.synchronize { [@rows.sort_by(&:first), clock_ms] }

        # Writes a row as given, bypassing every check (for tests of hand-edited rows); nil deletes it.
        def put(name, columns, label = nil)
          @mutex.synchronize { columns.nil? ? @rows.delete(name) : store(name, columns, label) }
        end

        def size = @mutex.synchronize { @rows.size }

        # True once the lease of one of `names` is cleared by a commit after this call started.
        def await_release(names, seconds)
          @mutex.synchronize do
            seen = @releases.values_at(*names)
            deadline = @clock.now_ns + (seconds * NANOS_PER_SECOND).round
            until @releases.values_at(*names) != seen
              left = deadline - @clock.now_ns
              return false unless left.positive?

              @clock.wait(@mutex, @released, left / NANOS_PER_SECOND.to_f)
            end
            true
          end
        end

        def inspect = "#<#{self.class.name} resources=#{size}>"
        alias to_s inspect

        private

        def store(name, columns, label)
          before = @rows[name]
          label = before&.label if label == HolderLabel::KEEP
          @rows[name] = Row.new(columns.dup.freeze, Time.now.utc, label).freeze
          return unless before&.columns&.[](1) && columns[1].nil?

          @releases[name] += 1
          @released.broadcast
        end
      end

      # One decision transaction on a {Database}: reads the committed row, writes kept until it ends.
      class Transaction
        attr_reader :writes

        def initialize(database)
          @database = database
          @writes = {}
        end

        def connection = @database

        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@writes[name]&.first || @database.columns(name), @database.clock_ms]
        end

        def write(name, columns, exists:, label:) # rubocop:disable Lint/UnusedMethodArgument -- one Hash for both
          kept = @writes[name]
          @writes[name] = [columns, label == HolderLabel::KEEP && kept ? kept.last : label]
        end
      end
    end
  end
end
