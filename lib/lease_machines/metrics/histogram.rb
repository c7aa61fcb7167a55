# frozen_string_literal: true

module LeaseMachines
  class Metrics
    # One histogram series: a count per fixed bucket, the sum and the count; the registry's Mutex guards it.
    class Histogram
      attr_reader :bounds, :sum, :count

      def initialize(bounds)
        @bounds = bounds
        @counts = Array.new(bounds.size, 0)
        @sum = 0.0
        @count = 0
      end

      def observe(value)
        index = @bounds.bsearch_index { |bound| value <= bound }
        @counts[index] += 1 if index
        @sum += value
        @count += 1
      end

      def cumulative
        running = 0
        @bounds.zip(@counts).map { |bound, count| [bound, running += count] } << [Float::INFINITY, @count]
      end

      def initialize_copy(source)
        super
        @counts = @counts.dup
      end
    end
  end
end
