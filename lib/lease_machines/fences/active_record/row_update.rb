# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One `record.fenced_update!(token, attributes)`: the record's unsaved
    # changes and `attributes`, written with one UPDATE of its row that also
    # sets the token column, on the condition that the row's token is NULL or
    # at most `token`:
    #
    #   UPDATE reports SET body = $1, lease_token = $2, updated_at = $3
    #   WHERE reports.id = $4 AND (reports.lease_token IS NULL OR reports.lease_token <= $5)
    #
    # It follows ActiveRecord's optimistic locking (`lock_version`): the
    # attributes are assigned and validated as `update!` does; when no row
    # was updated the token column (and the timestamps it set) go back to
    # what they were, the other changes stay unsaved (`changed?` is true,
    # `reload` shows the row), and the error is raised, here a FencedError
    # instead of ActiveRecord::StaleObjectError. Save callbacks do not run
    # (it is one UPDATE, as `update_columns` is); `updated_at`/`updated_on`
    # are set when the model records timestamps.
    class RowUpdate
      TIMESTAMPS = %w[updated_at updated_on].freeze

      def initialize(record, column)
        @record = record
        @column = column
        @model = record.class
      end

      # @return [true]
      def run(token, attributes, resource, owner = nil)
        @resource = resource
        @owner = owner
        check_record
        return refuse(token) if token.zero?

        @record.assign_attributes(attributes)
        @record.validate!(:update)
        written = mark(token)
        begin
          count = update(written)
        rescue Exception # rubocop:disable Lint/RescueException -- put the record back, then re-raise
          restore(written)
          raise
        end
        return applied if count == 1

        restore(written)
        refuse(token)
      end

      private

      def check_record
        raise ::ActiveRecord::ActiveRecordError, "cannot update a new record" if @record.new_record?
        raise ::ActiveRecord::ActiveRecordError, "cannot update a destroyed record" if @record.destroyed?
        raise ::ActiveRecord::ReadOnlyRecord, "#{@model} is marked as readonly" if @record.readonly?
      end

      # Sets the token, the timestamps and the lock version on the record,
      # returning what they were.
      def mark(token)
        written = { @column.name => @record[@column.name] }
        touched.each { |name| written[name] = @record[name] }
        locking = @model.locking_enabled? ? @model.locking_column : nil
        written[locking] = @record[locking] if locking
        @record[@column.name] = token
        now = Time.now
        touched.each { |name| @record[name] = now }
        @record[locking] = @record[locking].to_i + 1 if locking
        written
      end

      def touched
        @touched ||= TIMESTAMPS.select do |name|
          @model.record_timestamps && @record.has_attribute?(name) && !@record.will_save_change_to_attribute?(name)
        end
      end

      # The record's changes, and always the token (and the lock version,
      # when the model has one): the mark is written even when the record
      # already showed this token.
      def update(written)
        names = @record.changed_attribute_names_to_save | written.keys
        token = @record[@column.name]
        values = names.to_h { |name| [name, @record[name]] }.merge(@column.owner_values(token, @owner))
        row = @model.unscoped.where(@model.primary_key => @record.id_in_database)
        @model.unscoped do
          @column.admission.admitting(@column.admitting(row, token, @owner), @model, @resource, token).update_all(values)
        end
      end

      def restore(written)
        written.each { |name, value| @record[name] = value }
      end

      def applied
        @record.changes_applied
        true
      end

      def refuse(token)
        row = @model.unscoped.where(@model.primary_key => @record.id_in_database)
        described = "#{@model.name} #{@model.primary_key}=#{@record.id_in_database.inspect}"
        error = { resource: described, token: token, highest: row.pick(@column.name), record: @record }
        raise Refusals.report(FencedError.new(**error)) if token.zero?

        reissued = @column.reissued(row, @owner, **error)
        raise Refusals.report(reissued) if reissued

        raise @column.admission.refusal(@model, @resource, **error)
      end
    end
  end
end
