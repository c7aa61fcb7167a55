# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The scheduler's holds by when each is next due: a min-heap whose stale entries are dropped at the top.
    class DueQueue
      # Stale entries allowed beyond twice the live ones before a rebuild.
      COMPACT_SLACK = 64

      def initialize
        @heap = []
        @due = {}.compare_by_identity
        @sequence = 0
      end

      def set(hold, at)
        return @due.delete(hold) if at.nil?

        @due[hold] = at
        push([at, @sequence += 1, hold])
        compact if @heap.size > (2 * @due.size) + COMPACT_SLACK
      end

      def delete(hold) = @due.delete(hold)

      def include?(hold) = @due.key?(hold)

      def empty? = @due.empty?

      def size = @due.size

      def entries = @heap.size

      def first
        until @heap.empty?
          at, _, hold = @heap.first
          return [hold, at] if @due[hold] == at && @due.key?(hold)

          pop
        end
        nil
      end

      def due?(now) = (entry = first) ? entry.last <= now : false

      private

      def compact
        @heap = []
        @due.each { |hold, at| push([at, @sequence += 1, hold]) }
      end

      def push(entry)
        @heap << entry
        index = @heap.size - 1
        while index.positive?
          parent = (index - 1) / 2
          break if (@heap[parent] <=> entry) <= 0

          @heap[index] = @heap[parent]
          index = parent
        end
        @heap[index] = entry
      end

      def pop
        last = @heap.pop
        return if @heap.empty?

        index = 0
        size = @heap.size
        loop do
          child = (2 * index) + 1
          break if child >= size

          child += 1 if child + 1 < size && (@heap[child + 1] <=> @heap[child]).negative?
          break if (last <=> @heap[child]) <= 0

          @heap[index] = @heap[child]
          index = child
        end
        @heap[index] = last
      end
    end
  end
end
