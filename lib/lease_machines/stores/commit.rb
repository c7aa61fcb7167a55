# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What a `before_commit` hook receives: called inside the transaction,
    # after the new checkpoint is written and before COMMIT. `decision` is the
    # Decision about to be returned (nil for an operator's force release),
    # `checkpoint` the state being committed, `connection` the engine's raw
    # connection (SQLite3::Database or PG::Connection) in that transaction.
    Commit = Struct.new(:store, :name, :decision, :checkpoint, :connection, keyword_init: true)
  end
end
