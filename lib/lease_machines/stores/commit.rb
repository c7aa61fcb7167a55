# frozen_string_literal: true

module LeaseMachines
  module Stores
    # What a `before_commit` hook receives, inside the transaction just
    # before COMMIT (`decision` is nil for a force release).
    Commit = Struct.new(:store, :name, :decision, :checkpoint, :connection, keyword_init: true)
  end
end
