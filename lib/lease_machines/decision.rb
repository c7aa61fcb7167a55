# frozen_string_literal: true

module LeaseMachines
  # What the authority answered: a frozen value with a {Lease} or a reason.
  class Decision
    include ValueObject

    value_fields identity: %i[status lease reason]

    def self.new(status:, lease: nil, reason: nil)
      unless STATUSES.include?(status)
        raise ArgumentError, "status must be one of #{STATUSES.map(&:inspect).join(', ')}, got #{LeaseMachines.show(status)}"
      end

      check_shape(status, lease, reason)
      _new(status, lease, reason)
    end
    private_class_method :_new

    def _dump(_level) = [status, reason || "-", lease ? lease._dump(0) : "- - -"].join(" ")

    def self._load(text)
      status, reason, *fields = text.split(" ", 5)
      lease = fields.first == "-" ? nil : Lease._load(fields.join(" "))
      reason = reason == "-" ? nil : reason.to_sym
      status = status.to_sym
      status == :rejected ? rejected(reason) : new(status: status, lease: lease, reason: reason)
    end

    def inspect
      detail = lease ? " lease=#{LeaseMachines.show(lease)}" : ""
      detail += " reason=#{LeaseMachines.show(reason)}" if reason
      "#<#{self.class.name} #{status}#{detail}>"
    end
    alias to_s inspect

    def self.check_shape(status, lease, reason)
      case status
      when :granted, :renewed
        unless Lease === lease # rubocop:disable Style/CaseEquality -- answers for a BasicObject too
          raise TypeError, "lease must be a LeaseMachines::Lease for #{status.inspect}, got #{LeaseMachines.show(lease)}"
        end
        return if nil.equal?(reason)

        raise ArgumentError, "reason must be nil for #{status.inspect}, got #{LeaseMachines.show(reason)}"
      when :released
        raise ArgumentError, "a :released decision has no lease and no reason" unless nil.equal?(lease) && nil.equal?(reason)
      else
        check_reason(reason)
        raise ArgumentError, "lease must be nil for :rejected, got #{LeaseMachines.show(lease)}" unless nil.equal?(lease)
      end
    end

    def self.check_reason(reason)
      return if REASONS.include?(reason)

      raise ArgumentError, "reason must be one of #{REASONS.map(&:inspect).join(', ')}, got #{LeaseMachines.show(reason)}"
    end

    private_class_method :check_shape, :check_reason

    def self.rejected(reason)
      check_reason(reason)
      REJECTIONS.fetch(REASONS.index(reason))
    end
  end
end
