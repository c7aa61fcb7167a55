# frozen_string_literal: true

require_relative "errors"

module LeaseMachines
  # A fence refused a write: the token shown is lower than the highest the
  # protected resource has already accepted (or it is 0, which is never
  # issued). Nothing of the refused write was kept: the block of
  # {Fences::Table#guard} did not run, and no row was changed.
  #
  # Not a {StoreError}: the database did what it was asked, and the answer is
  # "you are stale". The worker that gets it must stop writing: a newer holder
  # exists.
  class FencedError
    # @return [String] what was fenced: the resource name given to
    #   {Fences::Table#guard}, or, for a fenced row, the model and its key
    #   (`"Report id=42"`)
    attr_reader :resource
    # @return [Integer] the token that was refused
    attr_reader :token
    # @return [Integer, nil] the fence's mark when it refused: the highest
    #   token accepted so far (nil when it has accepted none, which happens
    #   only for token 0, or for a row that no longer exists)
    attr_reader :highest
    # @return [Object, nil] the ActiveRecord record of a fenced
    #   `fenced_update!` (nil for a guard)
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

    def mark
      @highest.nil? ? "the fence has accepted no token yet" : "the fence has accepted token #{@highest}"
    end
  end
end
