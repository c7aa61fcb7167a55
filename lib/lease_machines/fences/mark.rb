# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One resource's mark as the fence table holds it, and the owner recorded with it
    # (nil: none): what `store.reconcile` raises the store's counters to.
    Mark = Struct.new(:resource, :highest, :owner, keyword_init: true)

    # Where a {Mark} is read from, and how.
    class Mark
      SQL = "SELECT resource, highest, #{OWNER_COLUMN} FROM #{TABLE} WHERE highest IS NOT NULL ORDER BY resource".freeze

      # A row of {SQL} (the resource's bytes taken as UTF-8, as a name is its bytes).
      def self.read(row)
        resource, highest, owner = row
        where = "#{TABLE} row #{resource.inspect}"
        new(resource: resource.dup.force_encoding(Encoding::UTF_8).freeze, highest: StoredToken.read(highest, where),
            owner: StoredToken.read(owner, "#{where} (#{OWNER_COLUMN})")).freeze
      end
    end
  end
end
