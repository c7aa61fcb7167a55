# frozen_string_literal: true

module LeaseMachines
  # The high-water mark kept at the protected resource: `accept(token)` raises it
  # for a token at least as high (never 0). In memory it only shows the rule.
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
