# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Memory < Store
      # One decision transaction on a {Database}: what it reads is the
      # committed row; what it writes is kept until the transaction ends.
      class Transaction
        # @return [Hash{String => Array}] the rows written, by name: [columns, label]
        attr_reader :writes

        def initialize(database)
          @database = database
          @writes = {}
        end

        # The database (what a before_commit hook gets as its connection).
        # @return [Database]
        def connection
          @database
        end

        # [the five stored columns (nil: no row), the clock in milliseconds]
        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@writes[name]&.first || @database.columns(name), @database.clock_ms]
        end

        # `label`: the holder's label, nil, or {HolderLabel::KEEP}.
        def write(name, columns, exists:, label:) # rubocop:disable Lint/UnusedMethodArgument -- one Hash for both
          kept = @writes[name]
          @writes[name] = [columns, label == HolderLabel::KEEP && kept ? kept.last : label]
        end
      end
    end
  end
end
