# frozen_string_literal: true

# The baseline a Ruby user could write by hand: the rules of SPEC 2.1 in plain
# Ruby, in the same order of checks, with the same strict argument checks
# (Integer owners and tokens in 0..2**64-1, finite non-negative times), times
# kept in exact Integer nanoseconds like the gem, and frozen value objects built
# through their keyword constructors.
#
# It is deliberately a fair baseline, not a straw man: releases and rejections
# are shared frozen decisions (as in the gem), there is no Mutex, no logging and
# no metaprogramming. It is used only by the benchmarks; its correctness against
# the gem is spot-checked by bench/decisions_bench.rb before timing.
module PureRuby
  U64_MAX = (2**64) - 1
  NANOS = 1_000_000_000
  DURATION_MAX_NS = (U64_MAX * NANOS) + (NANOS - 1)

  def self.u64!(value, name)
    raise TypeError, "#{name} must be an Integer in 0..#{U64_MAX}, got #{value.inspect}" unless value.is_a?(Integer)
    raise RangeError, "#{name} must be an Integer in 0..#{U64_MAX}, got #{value.inspect}" unless value >= 0 && value <= U64_MAX

    value
  end

  def self.nanos!(value, name)
    nanos =
      case value
      when Float
        raise ArgumentError, "#{name} must be finite and non-negative, got #{value}" unless value.finite? && value >= 0.0

        (value * NANOS).round
      when Integer
        raise ArgumentError, "#{name} must be non-negative, got #{value}" if value.negative?

        value * NANOS
      else
        raise TypeError, "#{name} must be an Integer or Float (seconds), got #{value.inspect}"
      end
    raise ArgumentError, "#{name} is too large, got #{value}" if nanos > DURATION_MAX_NS

    nanos
  end

  # A grant.
  class Lease
    attr_reader :owner, :token, :expires_at_ns

    def initialize(owner:, token:, expires_at_ns:)
      @owner = owner
      @token = token
      @expires_at_ns = expires_at_ns
      freeze
    end

    def expires_at = @expires_at_ns / 1e9
  end

  # An answer.
  class Decision
    attr_reader :status, :lease, :reason

    def initialize(status:, lease: nil, reason: nil)
      @status = status
      @lease = lease
      @reason = reason
      freeze
    end

    def granted? = @status == :granted
    def renewed? = @status == :renewed
    def released? = @status == :released
    def rejected? = @status == :rejected

    RELEASED = new(status: :released)
    REJECTED = %i[
      occupied stale_token not_owner expired clock_regressed invalid_ttl deadline_overflow tokens_exhausted
    ].to_h { |reason| [reason, new(status: :rejected, reason: reason)] }.freeze
  end

  # SPEC 2.1, clock policy :reject.
  class Authority
    def initialize
      @last_issued = nil
      @lease = nil
      @observed = 0
    end

    def acquire(owner:, now:, ttl:)
      grant(owner, now, ttl, false)
    end

    def reacquire(owner:, now:, ttl:)
      grant(owner, now, ttl, true)
    end

    def renew(owner:, token:, now:, ttl:)
      owner = PureRuby.u64!(owner, "owner")
      token = PureRuby.u64!(token, "token")
      now = PureRuby.nanos!(now, "now")
      ttl = PureRuby.nanos!(ttl, "ttl")
      return Decision::REJECTED[:clock_regressed] if now < @observed

      @observed = now
      return Decision::REJECTED[:invalid_ttl] if ttl.zero?

      lease = @lease
      return Decision::REJECTED[:stale_token] if lease.nil? || token != lease.token
      return Decision::REJECTED[:not_owner] if owner != lease.owner
      return Decision::REJECTED[:expired] if now >= lease.expires_at_ns

      deadline = now + ttl
      return Decision::REJECTED[:deadline_overflow] if deadline > DURATION_MAX_NS

      deadline = lease.expires_at_ns if lease.expires_at_ns > deadline
      @lease = Lease.new(owner: owner, token: token, expires_at_ns: deadline)
      Decision.new(status: :renewed, lease: @lease)
    end

    def release(owner:, token:, now:)
      owner = PureRuby.u64!(owner, "owner")
      token = PureRuby.u64!(token, "token")
      now = PureRuby.nanos!(now, "now")
      return Decision::REJECTED[:clock_regressed] if now < @observed

      @observed = now
      lease = @lease
      return Decision::REJECTED[:stale_token] if lease.nil? || token != lease.token
      return Decision::REJECTED[:not_owner] if owner != lease.owner
      return Decision::REJECTED[:expired] if now >= lease.expires_at_ns

      @lease = nil
      Decision::RELEASED
    end

    private

    def grant(owner, now, ttl, rotate)
      owner = PureRuby.u64!(owner, "owner")
      now = PureRuby.nanos!(now, "now")
      ttl = PureRuby.nanos!(ttl, "ttl")
      return Decision::REJECTED[:clock_regressed] if now < @observed

      @observed = now
      return Decision::REJECTED[:invalid_ttl] if ttl.zero?

      deadline = now + ttl
      return Decision::REJECTED[:deadline_overflow] if deadline > DURATION_MAX_NS

      lease = @lease
      return Decision::REJECTED[:occupied] if lease && now < lease.expires_at_ns && !(rotate && lease.owner == owner)
      return Decision::REJECTED[:tokens_exhausted] if @last_issued == U64_MAX

      @last_issued = @last_issued ? @last_issued + 1 : 1
      @lease = Lease.new(owner: owner, token: @last_issued, expires_at_ns: deadline)
      Decision.new(status: :granted, lease: @lease)
    end
  end

  # SPEC 2.3.
  class Fence
    attr_reader :highest

    def initialize(highest: nil)
      @highest = highest
    end

    def accept(token)
      token = PureRuby.u64!(token, "token")
      return false if token.zero? || (@highest && token < @highest)

      @highest = token
      true
    end
  end
end
