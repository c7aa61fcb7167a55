# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Memory < Store
      # One decision transaction on a {Database}: reads the committed row, writes kept until it ends.
      class Transaction
        attr_reader :writes

        def initialize(database)
          @database = database
          @writes = {}
        end

        def connection = @database

        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@writes[name]&.first || @database.columns(name), @database.clock_ms]
        end

        def write(name, columns, exists:, label:) # rubocop:disable Lint/UnusedMethodArgument -- one Hash for both
          kept = @writes[name]
          @writes[name] = [columns, label == HolderLabel::KEEP && kept ? kept.last : label]
        end
      end
    end
  end
end
