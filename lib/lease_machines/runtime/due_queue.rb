# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The scheduler's holds by when each is next due: entries sorted by time (a binary search places each, a
    # rescheduled hold's old entry stays behind), whose stale entries are dropped at the front.
    class DueQueue
      # Stale entries allowed beyond twice the live ones before a rebuild.
      COMPACT_SLACK = 64

      def initialize
        @entries = []
        @due = {}.compare_by_identity
      end

      def set(hold, at)
        return @due.delete(hold) if at.nil?

        @due[hold] = at
        last = @entries.last
        # Most holds come due after every other (one cadence, taken in turn): appended without a search.
        index = last.nil? || last.first <= at ? @entries.size : @entries.bsearch_index { |(entry_at, _)| entry_at > at }
        @entries.insert(index, [at, hold])
        compact if @entries.size > (2 * @due.size) + COMPACT_SLACK
      end

      def delete(hold) = @due.delete(hold)

      def empty? = @due.empty?

      def size = @due.size

      def entries = @entries.size

      def first
        until @entries.empty?
          at, hold = @entries.first
          return [hold, at] if @due.key?(hold) && @due[hold] == at

          @entries.shift
        end
        nil
      end

      def due?(now) = (entry = first) ? entry.last <= now : false

      private

      def compact = @entries = @due.map { |hold, at| [at, hold] }.sort_by!(&:first)
    end
  end
end
