# frozen_string_literal: true

module LeaseMachines
  # A fenced model's existing rows are written by the fenced forms only: the
  # writes ActiveRecord runs its update callbacks for (save, save!, update,
  # update!, update_attribute) raise UnfencedWriteError, naming the fenced
  # write, and send nothing, so a stale worker cannot overwrite a row a newer
  # holder wrote, nor lower its token by assigning it. Creating a row, a save
  # that changes nothing, and the fenced writes are untouched. Part of
  # RecordCases (every engine).
  module UnfencedRecordWriteCases
    def assert_unfenced_write_refused(record, &)
      error = assert_raises(UnfencedWriteError, &)
      assert_same record, error.record
      assert_equal "#{report_model.name} id=#{record.id} is fenced by lease_token: a plain save would write it " \
                   "without comparing tokens; write it with fenced_update!(token, attributes) (or " \
                   "#{report_model.name}.fenced_update_all, fenced_upsert!)", error.message
      error
    end

    def test_a_plain_save_of_a_fenced_row_is_refused_and_writes_nothing
      record = report(token: 5)
      record.body = "stale, by a worker whose lease ended"
      assert_unfenced_write_refused(record) { record.save! }
      assert_unfenced_write_refused(record) { record.save }
      assert_unfenced_write_refused(record) { record.update!(body: "stale by update!") }
      assert_unfenced_write_refused(record) { record.update(body: "stale by update") }
      assert_unfenced_write_refused(record) { record.update_attribute(:body, "stale by update_attribute") }
      assert_equal ["first", 5], report_model.where(id: record.id).pick(:body, :lease_token), "nothing was written"
      assert record.fenced_update!(5, body: "by 5"), "the fenced write still works on the same record"
      assert_equal ["by 5", 5], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_assigning_a_lower_token_and_saving_cannot_lower_the_rows_token
      record = report(token: 5)
      record.lease_token = 1
      assert_unfenced_write_refused(record) { record.save! }
      assert_equal 5, report_model.where(id: record.id).pick(:lease_token)
      assert_equal "5", stored(record).sub(/\A0+/, ""), "the stored token, read as text"
    end

    def test_a_row_never_fenced_is_refused_a_plain_save_too
      record = report # lease_token NULL
      assert_unfenced_write_refused(record) { record.update!(body: "unfenced") }
      assert_equal ["first", nil], report_model.where(id: record.id).pick(:body, :lease_token)
    end

    def test_creating_rows_and_saving_nothing_still_work
      created = report_model.create!(day: unique_name("day"), body: "created", lease_token: 3)
      assert_equal ["created", 3], report_model.where(id: created.id).pick(:body, :lease_token)
      built = report_model.new(day: unique_name("day"), body: "built")
      assert built.save!
      assert created.save!, "a save with no change writes nothing and passes"
      assert report_model.find(created.id).save
      assert_raises(FencedError) { created.fenced_update!(2, body: "stale") }
      assert created.reload.fenced_update!(3, body: "by 3")
      assert_equal ["by 3", 3], report_model.where(id: created.id).pick(:body, :lease_token)
    end
  end
end
