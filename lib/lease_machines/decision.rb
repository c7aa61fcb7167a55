# frozen_string_literal: true

module LeaseMachines
  # What the authority answered. A frozen value object:
  #
  # - `:granted` and `:renewed` carry a {Lease} and no reason;
  # - `:released` carries neither;
  # - `:rejected` carries a reason Symbol (see {REASONS}) and no lease.
  #
  # Releases and rejections are shared frozen instances ({RELEASED},
  # {REJECTIONS}): answering them allocates nothing.
  class Decision
    STATUSES = %i[granted renewed released rejected].freeze
    # In the order of the core's `Rejection::ALL`.
    REASONS = %i[
      occupied stale_token not_owner expired clock_regressed invalid_ttl deadline_overflow tokens_exhausted
    ].freeze

    attr_reader :status, :lease, :reason

    def initialize(status:, lease: nil, reason: nil)
      unless STATUSES.include?(status)
        raise ArgumentError, "status must be one of #{STATUSES.map(&:inspect).join(', ')}, got #{status.inspect}"
      end

      check_shape(status, lease, reason)
      @status = status
      @lease = lease
      @reason = reason
      freeze
    end

    def granted? = @status == :granted
    def renewed? = @status == :renewed
    def released? = @status == :released
    def rejected? = @status == :rejected

    def to_h
      { status: @status, lease: @lease&.to_h, reason: @reason }
    end

    def deconstruct_keys(_keys)
      { status: @status, lease: @lease, reason: @reason }
    end

    def ==(other)
      other.instance_of?(self.class) && other.status == @status && other.lease == @lease &&
        other.reason == @reason
    end
    alias eql? ==

    def hash
      [self.class, @status, @lease, @reason].hash
    end

    def inspect
      detail = @lease ? " lease=#{@lease.inspect}" : ""
      detail += " reason=#{@reason.inspect}" if @reason
      "#<#{self.class.name} #{@status}#{detail}>"
    end
    alias to_s inspect

    private

    def check_shape(status, lease, reason)
      case status
      when :granted, :renewed
        raise TypeError, "lease must be a LeaseMachines::Lease for #{status.inspect}, got #{lease.inspect}" unless lease.is_a?(Lease)
        raise ArgumentError, "reason must be nil for #{status.inspect}, got #{reason.inspect}" unless reason.nil?
      when :released
        raise ArgumentError, "a :released decision has no lease and no reason" unless lease.nil? && reason.nil?
      else
        raise ArgumentError, "reason must be one of #{REASONS.map(&:inspect).join(', ')}, got #{reason.inspect}" unless REASONS.include?(reason)
        raise ArgumentError, "lease must be nil for :rejected, got #{lease.inspect}" unless lease.nil?
      end
    end

    def initialize_copy(source)
      super
      freeze
    end

    public

    RELEASED = new(status: :released)
    REJECTIONS = REASONS.map { |reason| new(status: :rejected, reason: reason) }.freeze

    # The shared frozen decision for a rejection reason.
    def self.rejected(reason)
      index = REASONS.index(reason)
      raise ArgumentError, "reason must be one of #{REASONS.map(&:inspect).join(', ')}, got #{reason.inspect}" unless index

      REJECTIONS.fetch(index)
    end
  end
end
