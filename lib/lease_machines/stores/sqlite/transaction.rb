# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      # One decision transaction, inside BEGIN IMMEDIATE (the write lock is held).
      class Transaction
        attr_reader :connection, :statements

        def initialize(connection, store, failures)
          @statements = connection
          @connection = connection.database
          @store = store
          @failures = failures
        end

        # The five stored columns (nil: no row), then the store clock in ms.
        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@statements.run(LOCK_SQL, name), @store.clock_ms]
        end

        def write(name, columns, exists:, label:)
          if label == HolderLabel::KEEP
            @statements.run(exists ? UPDATE_SQL : INSERT_SQL, name, *columns)
          else
            @statements.run(exists ? UPDATE_LABELLED_SQL : INSERT_LABELLED_SQL, name, *columns, label)
          end
          return if @connection.changes == 1

          raise @failures.row_count("writing", name, @connection.changes)
        end

        # Writes `after` only when the row still holds `before` (nil: no row yet); whether it wrote.
        def compare_and_set(name, before, after, label)
          kept = label == HolderLabel::KEEP
          sql = if before
                  kept ? CAS_SQL : CAS_LABELLED_SQL
                else
                  kept ? CREATE_SQL : CREATE_LABELLED_SQL
                end
          @statements.run(sql, name, *after, *(kept ? [] : [label]), *before)
          @connection.changes == 1
        end
      end
    end
  end
end
