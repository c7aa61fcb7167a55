# frozen_string_literal: true

module LeaseMachines
  # A grant: who holds the resource, under which fencing token, until when.
  #
  # A frozen value object made by the extension (`owner`, `token`,
  # `expires_at_ns`, `expires_at` and `expired?` are native readers). Times are
  # kept exactly, in integer nanoseconds (`expires_at_ns`); `expires_at` shows
  # them as Float seconds.
  class Lease
    include ValueObject

    value_fields identity: %i[owner token expires_at_ns], shown: %i[owner token expires_at]

    # @param expires_at [Integer, Float] seconds (a Float rounds to the nearest nanosecond)
    def self.new(owner:, token:, expires_at:)
      _new(owner, token, expires_at)
    end

    # A lease from exact nanoseconds, as a store keeps them.
    def self.exact(owner:, token:, expires_at_ns:)
      _exact(owner, token, expires_at_ns)
    end

    private_class_method :_new, :_exact

    # Marshal: the exact fields as decimal text, rebuilt (and checked) by {exact}.
    def _dump(_level)
      "#{owner} #{token} #{expires_at_ns}"
    end

    def self._load(text)
      owner, token, expires_at_ns = ValueObject.integers(text, 3)
      exact(owner: owner, token: token, expires_at_ns: expires_at_ns)
    end
  end
end
