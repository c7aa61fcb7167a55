# frozen_string_literal: true

require_relative "fence_helper"
require_relative "unfenced_record_writes"
require "lease_machines/fences/active_record"

module LeaseMachines
  # Row-level fencing of ActiveRecord models, on both engines: every
  # statement compares tokens in the database. An including class provides
  # `base` (the engine's abstract class), `token_column` (how the migration
  # declares the column) and `raw_tokens_at_most(token)` (a count of rows
  # compared by a raw SQL query).
  module RecordCases
    include FenceTestHelper
    include UnfencedRecordWriteCases

    TABLE = "fenced_reports"

    def models
      @models ||= begin
        fenced = Class.new(base) do
          self.table_name = TABLE
          include Fences::Record
          fenced_by :lease_token
          validates :body, presence: true
        end
        locked = Class.new(base) { self.table_name = "locked_reports" }
        prefix = { sqlite: "SQLite", postgres: "Postgres", mysql: "MySQL" }.fetch(engine)
        RecordCases.const_set("#{prefix}FencedReport", fenced) unless RecordCases.const_defined?("#{prefix}FencedReport")
        [RecordCases.const_get("#{prefix}FencedReport"), locked]
      end
    end

    def report_model = models.first

    def create_tables
      schema = base.connection
      schema.drop_table(TABLE, if_exists: true)
      schema.drop_table("locked_reports", if_exists: true)
      schema.create_table(TABLE) do |t|
        t.string :day, null: false, index: { unique: true }
        t.text :body
        token_column(t)
        t.timestamps
      end
      schema.create_table("locked_reports") do |t|
        t.text :body
        t.integer :lock_version, null: false, default: 0
      end
      report_model.reset_column_information
    end

    def report(token: nil, body: "first", day: unique_name("day"))
      row = report_model.create!(day: day, body: body)
      report_model.where(id: row.id).update_all(lease_token: token) if token
      report_model.find(row.id)
    end

    def stored(record)
      base.connection.select_value("SELECT #{as_text('lease_token')} FROM #{TABLE} WHERE id = #{Integer(record.id)}")
    end

    # SQL reading a column as text (MySQL casts to CHAR, and has no TEXT type to cast to).
    def as_text(column)
      engine == :mysql ? "CAST(#{column} AS CHAR)" : "CAST(#{column} AS TEXT)"
    end

    def test_a_first_fenced_update_sets_the_token_with_the_changes
      record = report
      assert_nil record.lease_token
      assert record.fenced_update!(3, body: "by 3")

      refute_predicate record, :changed?
      assert_equal 3, record.lease_token
      fresh = report_model.find(record.id)
      assert_equal ["by 3", 3], [fresh.body, fresh.lease_token]
      assert_equal stored_text(3), stored(record).to_s
    end

    def test_equal_and_greater_tokens_update_the_row
      record = report(token: 5)
      assert record.fenced_update!(5, body: "again by 5")
      assert record.fenced_update!(8, body: "by 8")
      assert_equal ["by 8", 8], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_a_stale_token_is_refused_and_the_record_is_left_like_a_stale_object
      record = report(token: 5, body: "by 5")
      before = record.updated_at

      error = assert_raises(FencedError) { record.fenced_update!(4, body: "stale by 4") }
      assert_equal ["#{report_model.name} id=#{record.id}", 4, 5], [error.resource, error.token, error.highest]
      assert_same record, error.record
      assert_equal %(#{error.resource.inspect} refused token 4: it has already accepted token 5), error.message
      assert_equal ["by 5", 5], report_model.where(id: record.id).pick(:body, :lease_token), "nothing was written"

      # As ActiveRecord leaves a record whose update! raised StaleObjectError:
      # the token (there: lock_version) is back to its value, the other
      # changes are still unsaved.
      assert_equal 5, record.lease_token
      assert_equal before, record.updated_at
      assert_equal({ "body" => ["by 5", "stale by 4"] }, record.changes)
      locked = locked_record_after_stale_update
      assert_equal(locked.changes.keys, record.changes.keys)
      assert_equal "by 5", record.reload.body
    end

    def locked_record_after_stale_update
      locked_model = models.last
      row = locked_model.create!(body: "by 5")
      winner = locked_model.find(row.id)
      loser = locked_model.find(row.id)
      winner.update!(body: "by the other")
      assert_raises(::ActiveRecord::StaleObjectError) { loser.update!(body: "stale by 4") }
      assert_equal 0, loser.lock_version
      loser
    end

    def test_token_zero_is_refused_before_anything_is_assigned_or_sent
      record = report(token: 2)
      error = assert_raises(FencedError) { record.fenced_update!(0, body: "zero") }
      assert_equal [0, 2], [error.token, error.highest]
      refute_predicate record, :changed?
      assert_equal 0, report_model.fenced_update_all(0, { id: record.id }, body: "zero")
      assert_equal "first", report_model.find(record.id).body

      fresh = report
      assert_raises(FencedError) { fresh.fenced_update!(0, body: "zero") }
      assert_nil report_model.find(fresh.id).lease_token, "token 0 never marks a row, even one never fenced"
    end

    def test_every_refused_row_write_is_a_fence_refused_event
      seen = []
      subscriber = LeaseMachines.subscribe do |name, payload|
        seen << payload.values_at(:resource, :token, :reason, :highest) if name == :fence_refused
      end
      record = report(token: 5)
      assert_raises(FencedError) { record.fenced_update!(4, body: "stale") }
      assert_raises(FencedError) { record.fenced_update!(0, body: "zero") }
      day = unique_name("upsert")
      report_model.fenced_upsert!(5, { day: day, body: "by 5" }, unique_by: :day)
      assert_raises(FencedError) { report_model.fenced_upsert!(4, { day: day, body: "stale" }, unique_by: :day) }
      assert_raises(FencedError) { report_model.fenced_upsert!(0, { day: unique_name, body: "zero" }, unique_by: :day) }

      row = "#{report_model.name} id=#{record.id}"
      assert_equal [[row, 4, :stale, 5], [row, 0, :zero_token, 5], ["#{report_model.name} day=#{day.inspect}", 4, :stale, 5]],
                   seen.first(3)
      assert_equal [0, :zero_token], seen.last.values_at(1, 2)
      assert_equal 4, seen.size
    ensure
      LeaseMachines.unsubscribe(subscriber)
    end

    def test_the_token_is_written_even_when_the_record_already_shows_it
      record = report(token: 5)
      report_model.where(id: record.id).update_all(lease_token: 2) # a mark lowered by hand, behind the record's back
      record.fenced_update!(5, body: "by 5")
      assert_equal ["by 5", 5], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_a_model_with_optimistic_locking_keeps_its_lock_version_in_step
      versioned = Class.new(base) do
        self.table_name = "versioned_reports"
        include Fences::Record
        fenced_by
      end
      name = "VersionedReport#{engine}"
      RecordCases.const_set(name, versioned) unless RecordCases.const_defined?(name)
      versioned = RecordCases.const_get(name)
      base.connection.create_table("versioned_reports", force: true) do |t|
        t.text :body
        token_column(t)
        t.integer :lock_version, null: false, default: 0
      end
      versioned.reset_column_information
      row = versioned.create!(body: "first")
      assert row.fenced_update!(3, body: "by 3")
      assert_equal [1, 1], [row.lock_version, versioned.find(row.id).lock_version]
      assert row.fenced_update!(3, body: "a second write") # lock_version 1 in memory and in the row: no conflict
      assert_raises(FencedError) { row.fenced_update!(2, body: "stale") }
      assert_equal 2, row.lock_version, "put back after the refusal"
      assert_equal [2, 3], versioned.where(id: row.id).pick(:lock_version, :lease_token)
    end

    def test_validations_run_and_an_invalid_record_writes_nothing
      record = report(token: 1)
      assert_raises(::ActiveRecord::RecordInvalid) { record.fenced_update!(2, body: "") }
      assert_equal ["first", 1], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_updated_at_is_set_and_a_given_one_is_kept
      record = report
      record.update_columns(updated_at: Time.utc(2000, 1, 1))
      record.fenced_update!(1, body: "touched")
      assert_operator report_model.find(record.id).updated_at, :>, Time.utc(2020, 1, 1)
      stamp = Time.utc(2010, 5, 5)
      record.fenced_update!(1, body: "stamped", updated_at: stamp)
      assert_equal stamp, report_model.find(record.id).updated_at
    end

    def test_a_fenced_update_inside_a_transaction_rolls_back_with_it
      record = report(token: 1)
      base.transaction do
        record.fenced_update!(2, body: "rolled back")
        raise ::ActiveRecord::Rollback
      end
      assert_equal ["first", 1], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_a_deleted_row_is_refused_too
      record = report(token: 1)
      report_model.where(id: record.id).delete_all
      error = assert_raises(FencedError) { record.fenced_update!(2, body: "gone") }
      assert_nil error.highest
      assert_match(/refused token 2: the row was not found/, error.message)
    end

    def test_fenced_update_all_updates_only_the_rows_the_token_may_write
      batch = unique_name("batch")
      rows = [nil, 3, 5, 9].map.with_index { |token, at| report(token: token, day: "#{batch}-#{at}") }
      count = report_model.fenced_update_all(5, ["day LIKE ?", "#{batch}-%"], body: "by 5")
      assert_equal 3, count
      bodies = rows.map { |row| report_model.where(id: row.id).pick(:body, :lease_token) }
      assert_equal [["by 5", 5], ["by 5", 5], ["by 5", 5], ["first", 9]], bodies
      assert_equal 0, report_model.fenced_update_all(4, { day: "#{batch}-0" }, body: "stale")
    end

    def test_fenced_update_all_works_on_a_relation
      batch = unique_name("relation")
      rows = [1, 7].map.with_index { |token, at| report(token: token, day: "#{batch}-#{at}") }
      assert_equal 1, report_model.where("day LIKE ?", "#{batch}-%").fenced_update_all(4, {}, body: "by 4")
      assert_equal(["by 4", "first"], rows.map { |row| report_model.find(row.id).body })
    end

    def test_the_extremes_of_the_token_range_compare_in_sql
      batch = unique_name("extremes")
      values = [(2**63) - 1, 2**63, U64_MAX]
      rows = values.map.with_index { |token, at| report(token: token, day: "#{batch}-#{at}") }
      assert_equal values, rows.map { |row| report_model.find(row.id).lease_token }, "read back exactly"
      assert_equal(values.map { |token| stored_text(token) }, rows.map { |row| stored(row).to_s })
      assert_equal [1, 2, 3], values.map { |token| raw_tokens_at_most(batch, token) }, "the database's own comparison"

      assert_equal 2, report_model.fenced_update_all(2**63, ["day LIKE ?", "#{batch}-%"], body: "by 2**63")
      assert_equal([2**63, 2**63, U64_MAX], rows.map { |row| report_model.find(row.id).lease_token })
      assert_raises(FencedError) { report_model.find(rows.last.id).fenced_update!(2**63, body: "stale") }
      assert report_model.find(rows.last.id).fenced_update!(U64_MAX, body: "by 2**64-1")
    end

    def test_fenced_upsert_creates_overwrites_and_refuses
      day = unique_name("upsert")
      assert report_model.fenced_upsert!(3, { day: day, body: "by 3" }, unique_by: :day)
      created = report_model.find_by!(day: day)
      assert_equal ["by 3", 3], [created.body, created.lease_token]

      assert report_model.fenced_upsert!(5, { day: day, body: "by 5" }, unique_by: :day)
      error = assert_raises(FencedError) { report_model.fenced_upsert!(4, { day: day, body: "stale" }, unique_by: :day) }
      assert_equal [4, 5], [error.token, error.highest]
      assert_equal %(#{report_model.name} day=#{day.inspect}), error.resource
      assert report_model.fenced_upsert!(5, { day: day, body: "again by 5" }, unique_by: "day")
      again = report_model.find_by!(day: day)
      assert_equal ["again by 5", 5, created.id], [again.body, again.lease_token, again.id]
      assert_equal created.created_at.to_i, again.created_at.to_i, "an overwrite keeps created_at"
      assert_raises(FencedError) { report_model.fenced_upsert!(0, { day: unique_name, body: "zero" }, unique_by: :day) }
    end

    def test_fenced_updates_from_several_processes_leave_the_highest_token
      record = report
      create_row_log # a trigger logs every committed update of the row's token, in commit order
      count = 48
      tokens = (1..count).to_a.shuffle(random: Random.new(7))
      results_r, results_w = IO.pipe
      children = Array.new(4) do |index|
        mine = tokens.each_slice(4).filter_map { |slice| slice[index] }
        fork_child do
          row = report_model.find(record.id) # ActiveRecord discards the parent's connections after fork
          outcomes = mine.map do |token|
            row.fenced_update!(token, body: "by #{token}")
            "#{token}:ok"
          rescue FencedError => e
            raise "wrong error #{e.inspect}" unless e.token == token && e.highest > token

            "#{token}:fenced"
          end
          results_w.write("#{outcomes.join(',')}\n")
        end
      end
      results_w.close
      assert(children.all? { |pid| wait_child(pid, timeout: 60).success? }, "every child finishes cleanly")
      outcomes = results_r.read.split.flat_map { |line| line.split(",") }.to_h { |entry| entry.split(":") }

      logged = base.connection.select_values("SELECT #{as_text('token')} FROM row_log ORDER BY id").map do |token|
        Integer(token, 10)
      end
      assert_equal count, outcomes.size
      assert_equal logged.sort, outcomes.select { |_, outcome| outcome == "ok" }.keys.map(&:to_i).sort
      assert_equal logged.sort, logged, "in commit order, every accepted token is greater than the ones before"
      assert_equal count, logged.last
      assert_equal ["by #{count}", count], report_model.where(id: record.id).pick(:body, :lease_token)
    ensure
      results_r&.close
    end

    def test_bad_arguments_raise_clear_errors
      ill_typed!
      record = report
      range = OWNER_RANGE
      assert_equal "token must be an Integer in #{range}, got \"1\" (String)",
                   assert_raises(TypeError) { record.fenced_update!("1", body: "x") }.message
      assert_equal "token must be an Integer in #{range}, got #{2**64}",
                   assert_raises(RangeError) { report_model.fenced_update_all(2**64, {}, body: "x") }.message
      assert_equal "attributes must be a Hash, got [:body]",
                   assert_raises(TypeError) { record.fenced_update!(1, [:body]) }.message
      assert_equal "attributes must not set lease_token: the fence writes the token",
                   assert_raises(ArgumentError) { record.fenced_update!(1, lease_token: 9) }.message
      record.lease_token = "5" # ActiveRecord casts when the value is read (or saved), not when it is assigned
      assert_equal "#{report_model.name}#lease_token must be an Integer in #{range}, got \"5\" (String)",
                   assert_raises(TypeError) { record.lease_token }.message
      assert_raises(TypeError) { record.save! }
      record.reload
      assert_equal "attributes must include the unique_by columns, missing day",
                   assert_raises(ArgumentError) { report_model.fenced_upsert!(1, { body: "x" }, unique_by: :day) }.message
      assert_nil report_model.find(record.id).lease_token
    end

    def test_a_column_that_cannot_hold_tokens_is_refused_with_the_migration_line
      base.connection.create_table("integer_reports", force: true) { |t| t.integer :lease_token }
      integer_model = Class.new(base) do
        self.table_name = "integer_reports"
        include Fences::Record
        fenced_by
      end
      RecordCases.const_set("IntegerReport#{engine}", integer_model) unless RecordCases.const_defined?("IntegerReport#{engine}")
      row = integer_model.create!
      error = assert_raises(ArgumentError) { row.fenced_update!(1) }
      assert_match(/#lease_token is (integer|INTEGER|int(\(11\))?), which cannot hold every token exactly or compare tokens/,
                   error.message)
      assert_match(/declare it as (text|numeric|decimal)(\(20,0\))? \(add_column :integer_reports, :lease_token, /, error.message)

      bare = Class.new(base) do
        self.table_name = "integer_reports"
        include Fences::Record
      end
      assert_match(/has no token column: add `fenced_by :lease_token`/, assert_raises(ArgumentError) do
                                                                          bare.fenced_update_all(1, {}, {})
                                                                        end.message)
      assert_raises(TypeError) { Module.new.include(Fences::Record) }
    end
  end
end
