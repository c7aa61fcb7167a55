# frozen_string_literal: true

module LeaseMachines
  # A grant: who holds the resource, under which fencing token, until when.
  #
  # A frozen value object. Times are kept exactly, in integer nanoseconds
  # (`expires_at_ns`); `expires_at` shows them as Float seconds.
  class Lease
    # @return [Integer] the holder
    attr_reader :owner
    # @return [Integer] the fencing token, 1..2**64-1
    attr_reader :token
    # @return [Integer] the expiry instant in exact nanoseconds
    attr_reader :expires_at_ns

    def initialize(owner:, token:, expires_at:)
      Native.init_lease(self, owner, token, expires_at)
      freeze
    end

    # @return [Float] the first instant (seconds) at which the lease is no longer held
    def expires_at
      @expires_at_ns / 1e9
    end

    # @return [Boolean] whether the lease has expired at `now` (`now >= expires_at`)
    def expired?(now)
      Native.nanos(now, "now") >= @expires_at_ns
    end

    def to_h
      { owner: @owner, token: @token, expires_at: expires_at }
    end

    def deconstruct_keys(_keys)
      to_h
    end

    def ==(other)
      other.instance_of?(self.class) && other.owner == @owner && other.token == @token &&
        other.expires_at_ns == @expires_at_ns
    end
    alias eql? ==

    def hash
      [self.class, @owner, @token, @expires_at_ns].hash
    end

    def inspect
      "#<#{self.class.name} owner=#{@owner} token=#{@token} expires_at=#{expires_at}>"
    end
    alias to_s inspect

    private

    def initialize_copy(source)
      super
      freeze
    end
  end
end
