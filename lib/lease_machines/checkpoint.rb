# frozen_string_literal: true

module LeaseMachines
  # An authority's whole state: the greatest token ever issued, the current
  # lease record (possibly expired) and the latest observed instant. Store it
  # before anyone acts on a decision; {Authority.restore} continues the history.
  #
  # A frozen value object. `observed_ns` is exact; `observed` is Float seconds.
  class Checkpoint
    # @return [Integer, nil] the token high-water mark
    attr_reader :last_issued
    # @return [Lease, nil] the current lease record
    attr_reader :lease
    # @return [Integer] the latest observed instant in exact nanoseconds
    attr_reader :observed_ns

    # Rebuilds a checkpoint from stored parts (one row per resource). Raises
    # ArgumentError when the parts cannot come from one history: a lease with no
    # token issued, or a lease whose token is greater than `last_issued`.
    def self.from_parts(last_issued:, lease:, observed:)
      new(last_issued: last_issued, lease: lease, observed: observed)
    end

    def initialize(last_issued:, lease:, observed:)
      Native.init_checkpoint(self, last_issued, lease, observed)
      freeze
    end

    # @return [Float] the latest observed instant in seconds
    def observed
      @observed_ns / 1e9
    end

    def to_h
      { last_issued: @last_issued, lease: @lease&.to_h, observed: observed }
    end

    def deconstruct_keys(_keys)
      { last_issued: @last_issued, lease: @lease, observed: observed }
    end

    def ==(other)
      other.instance_of?(self.class) && other.last_issued == @last_issued && other.lease == @lease &&
        other.observed_ns == @observed_ns
    end
    alias eql? ==

    def hash
      [self.class, @last_issued, @lease, @observed_ns].hash
    end

    def inspect
      "#<#{self.class.name} last_issued=#{@last_issued.inspect} lease=#{@lease.inspect} observed=#{observed}>"
    end
    alias to_s inspect

    private

    def initialize_copy(source)
      super
      freeze
    end
  end
end
