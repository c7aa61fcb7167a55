# frozen_string_literal: true

module LeaseMachines
  # The high-water mark kept at the protected resource. `accept(token)` is true,
  # raising the mark, when the token is at least the highest accepted so far;
  # false otherwise. Equal tokens pass (one lease, many writes). Token 0 was never
  # issued and is never accepted.
  #
  # A fence in memory only shows the rule: at a real resource, store the mark
  # in the same transaction as the write it guards.
  class Fence
    # @param highest [Integer, nil] the mark to start from (as stored with the data)
    def initialize(highest: nil)
      _init(highest)
    end

    def inspect
      "#<#{self.class.name} highest=#{highest.inspect}>"
    end
    alias to_s inspect
  end
end
