# frozen_string_literal: true

require_relative "errors"

module LeaseMachines
  # A fence refused a write: the token is below the resource's mark (or 0). Nothing was written.
  class FencedError
    # @return [String] the resource given to {Fences::Table#guard}, or a fenced row's model and key
    attr_reader :resource
    # @return [Integer] the token that was refused
    attr_reader :token
    # @return [Integer, nil] the fence's mark when it refused (nil: none yet)
    attr_reader :highest
    # @return [Object, nil] the record of a fenced `fenced_update!` (nil for a guard)
    attr_reader :record

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
