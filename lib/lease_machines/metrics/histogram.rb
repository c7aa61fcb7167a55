# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # One histogram series: a count per fixed bucket, the sum and the count.
    # Not synchronized: the registry's Mutex guards it.
    class Histogram
      # @return [Array<Float>] the buckets' upper bounds, ascending
      attr_reader :bounds
      # @return [Float]
      attr_reader :sum
      # @return [Integer]
      attr_reader :count

      def initialize(bounds)
        @bounds = bounds
        @counts = Array.new(bounds.size, 0)
        @sum = 0.0
        @count = 0
      end

      # Counts `value` (seconds) in the first bucket it fits, and in the sum.
      def observe(value)
        index = @bounds.bsearch_index { |bound| value <= bound }
        @counts[index] += 1 if index
        @sum += value
        @count += 1
      end

      # @return [Array<[Float, Integer]>] each upper bound with the number of
      #   values at or below it (cumulative, as Prometheus' `le`), then
      #   `[Float::INFINITY, count]`
      def cumulative
        running = 0
        @bounds.zip(@counts).map { |bound, count| [bound, running += count] } << [Float::INFINITY, @count]
      end

      # A copy, for a snapshot taken under the registry's Mutex.
      def dup
        copy = super
        copy.instance_variable_set(:@counts, @counts.dup)
        copy
      end
    end
  end
end
