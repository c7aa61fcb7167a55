# frozen_string_literal: true

module LeaseMachines
  module Fences
    # The `fence_refused` event of a `fenced_update_all` that left some of
    # the rows it matched (it raises nothing; the count it returns is the
    # rows written): one event per call, for the rows it refused, made only
    # when someone listens (one more count and one more read). Its
    # `resource:` names the model and how many rows were refused, its
    # `highest:` the greatest token among the rows matched, its `reason:`
    # what a `fenced_update!` of such a row would have said (`:stale`,
    # `:reissued`, or for a bound model what the store says).
    class RowRefusals
      def initialize(model, column)
        @model = model
        @column = column
      end

      # @param matched [ActiveRecord::Relation] the rows the conditions matched
      # @param updated [Integer] how many of them the call wrote
      def report(matched, token, owner, resource, updated)
        refused = matched.count - updated
        return unless refused.positive?

        highest = StoredToken.read(matched.maximum(@column.name), "#{@model.table_name}.#{@column.name}")
        error = { resource: "#{@model.name} (#{refused} of #{refused + updated} rows)", token: token, highest: highest }
        reissued = highest.nil? || highest > token ? nil : @column.reissued(matched.where(@column.name => token), owner, **error)
        return Refusals.report(reissued) if reissued

        @column.admission.refusal(@model, resource, **error)
      end
    end
  end
end
