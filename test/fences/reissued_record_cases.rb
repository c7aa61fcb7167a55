# frozen_string_literal: true

require "lease_machines/fences/active_record"

module LeaseMachines
  # Row fencing of a model with a `lease_owner` column (docs/FENCES.md,
  # "Reissued tokens"): a write that shows its owner (a Pass) records it, and
  # an equal token shown by another owner is refused as reissued; a model
  # without the column keeps the old behaviour. Also the `fence_refused`
  # event of a `fenced_update_all` that left rows. Included next to
  # RecordCases (its `base`, `engine`, `token_column`, `report_model`).
  module ReissuedRecordCases
    OWNED_TABLE = "owned_reports"

    def owned_model
      prefix = { sqlite: "SQLite", postgres: "Postgres", mysql: "MySQL" }.fetch(engine)
      name = "#{prefix}OwnedReport"
      return ReissuedRecordCases.const_get(name) if ReissuedRecordCases.const_defined?(name)

      model = Class.new(base) do
        self.table_name = OWNED_TABLE
        include Fences::Record
        fenced_by :lease_token
      end
      ReissuedRecordCases.const_set(name, model)
    end

    def owned(token: nil, owner: nil)
      unless @owned_table
        schema = base.connection
        schema.drop_table(OWNED_TABLE, if_exists: true)
        schema.create_table(OWNED_TABLE) do |t|
          t.string :day, null: false, index: { unique: true }
          t.text :body
          token_column(t)
          engine == :sqlite ? t.string(:lease_owner, limit: 20) : t.decimal(:lease_owner, precision: 20, scale: 0)
        end
        owned_model.reset_column_information
        @owned_table = true
      end
      row = owned_model.create!(day: unique_name("day"), body: "first")
      owned_model.where(id: row.id).update_all(lease_token: token, lease_owner: owner) if token
      owned_model.find(row.id)
    end

    def shown(token, owner) = Fences::Pass.new("reports/nightly", token, owner: owner)

    def owner_of(record) = owned_model.where(id: record.id).pick(:lease_owner)&.to_i

    def test_an_equal_token_of_another_owner_is_refused_as_reissued
      record = owned
      assert record.fenced_update!(shown(5, 7), body: "by 7")
      assert record.fenced_update!(shown(5, 7), body: "by 7, again")
      assert_equal 7, owner_of(record)

      error = assert_raises(ReissuedTokenError) { record.fenced_update!(shown(5, 12), body: "by 12, reissued") }
      assert_equal [5, 5, 12, 7, record], [error.token, error.highest, error.owner, error.recorded_owner, error.record]
      assert_equal ["by 7, again", 7], [owned_model.find(record.id).body, owner_of(record)]

      assert record.reload.fenced_update!(shown(6, 12), body: "by 12 with a new token")
      assert_equal 12, owner_of(record)
      assert_raises(FencedError) { record.reload.fenced_update!(shown(5, 7), body: "stale") }
    end

    def test_fenced_update_all_leaves_the_rows_of_a_reissued_token
      mine = owned(token: 5, owner: 7)
      never = owned
      seen = []
      subscriber = LeaseMachines.subscribe { |name, payload| seen << payload if name == :fence_refused }
      assert_equal 1, owned_model.fenced_update_all(shown(5, 12), { id: [mine.id, never.id] }, body: "by 12")
      assert_equal([["first", 7], ["by 12", 12]], [mine, never].map { |r| [owned_model.find(r.id).body, owner_of(r)] })
      assert_equal([[:reissued, 5, 5, "#{owned_model.name} (1 of 2 rows)"]],
                   seen.map { |payload| payload.values_at(:reason, :token, :highest, :resource) })
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end

    def test_a_bare_token_keeps_an_equal_marks_owner_and_clears_a_greater_ones
      record = owned(token: 5, owner: 7)
      assert record.fenced_update!(5, body: "bare, equal")
      assert_equal 7, owner_of(record), "an equal bare token leaves the recorded owner"
      assert_raises(ReissuedTokenError) { record.reload.fenced_update!(shown(5, 12), body: "reissued") }
      assert_equal 1, owned_model.fenced_update_all(6, { id: record.id }, body: "bare, greater")
      assert_nil owner_of(record), "a greater bare token: no owner known"
      assert record.reload.fenced_update!(shown(6, 12), body: "by 12")
      assert_equal 12, owner_of(record)
    end

    def test_fenced_upsert_records_the_owner_and_refuses_a_reissued_token
      owned
      day = unique_name("day")
      upsert = ->(token, body) { owned_model.fenced_upsert!(token, { day: day, body: body }, unique_by: :day) }
      owner = -> { owned_model.where(day: day).pick(:lease_owner)&.to_i }
      assert upsert.call(shown(5, 7), "by 7")
      assert_equal 7, owner.call
      error = assert_raises(ReissuedTokenError) { upsert.call(shown(5, 12), "reissued") }
      assert_equal [12, 7, 5], [error.owner, error.recorded_owner, error.highest]
      assert upsert.call(5, "bare, equal")
      assert_equal 7, owner.call, "an equal bare token leaves the recorded owner"
      assert upsert.call(shown(6, 12), "by 12")
      assert_equal [12, "by 12"], [owner.call, owned_model.find_by(day: day).body]
    end

    def test_without_the_owner_column_owners_are_not_compared
      record = report
      assert record.fenced_update!(shown(5, 7), body: "by 7")
      assert record.fenced_update!(shown(5, 12), body: "by 12: not told apart")
      assert_equal "by 12: not told apart", report_model.find(record.id).body
    end

    def test_fenced_update_all_reports_the_rows_it_refused
      batch = unique_name("batch")
      stale = report(token: 5, day: "#{batch}-0")
      report(token: 3, day: "#{batch}-1")
      seen = []
      subscriber = LeaseMachines.subscribe { |name, payload| seen << payload if name == :fence_refused }
      assert_equal 1, report_model.fenced_update_all(4, ["day LIKE ?", "#{batch}-%"], body: "by 4")
      assert_equal 0, report_model.fenced_update_all(0, { id: stale.id }, body: "zero")
      assert_equal 2, report_model.fenced_update_all(5, ["day LIKE ?", "#{batch}-%"], body: "by 5: none left, no event")
      assert_equal([[:stale, 4, 5, "#{report_model.name} (1 of 2 rows)"], [:zero_token, 0, nil, report_model.name]],
                   seen.map { |payload| payload.values_at(:reason, :token, :highest, :resource) })
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end
  end
end
