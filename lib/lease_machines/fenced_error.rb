# frozen_string_literal: true

require_relative "errors"

module LeaseMachines
  # A fence refused a write: the token is below the resource's mark (or 0). Nothing was written.
  class FencedError
    # The resource given to {Fences::Table#guard} (or a fenced row's model and key), the
    # token refused, the fence's mark when it refused (nil: none yet), and the record of a
    # fenced `fenced_update!` (nil for a guard).
    attr_reader :resource, :token, :highest, :record

    def initialize(resource:, token:, highest:, record: nil)
      @resource = resource
      @token = token
      @highest = highest
      @record = record
      super("#{resource.inspect} refused token #{token}: #{reason}")
    end

    private

    def reason
      if @token.zero?
        "tokens start at 1, 0 is never issued (#{mark})"
      elsif @highest.nil?
        "the row was not found (deleted, or its key changed)"
      else
        "it has already accepted token #{@highest}"
      end
    end

    def mark = @highest.nil? ? "the fence has accepted no token yet" : "the fence has accepted token #{@highest}"
  end
end
