# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      # One decision transaction on the store's connection, inside BEGIN
      # IMMEDIATE (the write lock is held).
      class Transaction
        # @return [SQLite3::Database]
        attr_reader :connection
        # @return [Connection] the store's connection object
        attr_reader :statements

        def initialize(connection, store, failures)
          @statements = connection
          @connection = connection.database
          @store = store
          @failures = failures
        end

        # Reads the resource's row, then the store clock. @return
        # [[Array<String, nil>, nil], Integer] the five stored columns (nil: no
        # row) and the clock in milliseconds
        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@statements.run(LOCK_SQL, name), @store.clock_ms]
        end

        # Writes the five columns (decimal Strings or nil), and the holder's
        # label unless it is {HolderLabel::KEEP}.
        def write(name, columns, exists:, label:)
          if label == HolderLabel::KEEP
            @statements.run(exists ? UPDATE_SQL : INSERT_SQL, name, *columns)
          else
            @statements.run(exists ? UPDATE_LABELLED_SQL : INSERT_LABELLED_SQL, name, *columns, label)
          end
          return if @connection.changes == 1

          raise @failures.row_count("writing", name, @connection.changes)
        end
      end
    end
  end
end
