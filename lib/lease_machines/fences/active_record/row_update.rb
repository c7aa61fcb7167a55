# frozen_string_literal: true

module LeaseMachines
  module Fences
    # One `record.fenced_update!(token, attributes)`: the record's changes and the token
    # in one UPDATE of its row, on the condition that the row's token is NULL or at most
    # `token`. As optimistic locking does: assigned and validated as `update!` does; when
    # no row was updated the token (and timestamps) go back, the other changes stay
    # unsaved, and a FencedError is raised. No save callbacks run.
    class RowUpdate
      TIMESTAMPS = %w[updated_at updated_on].freeze

      def initialize(record, column)
        @record = record
        @column = column
        @model = record.class
      end

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

      # Sets the token, the timestamps and the lock version; returns what they were.
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

      # Always the token (and lock version) too: written even when the record showed it.
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
        raise @column.refusal(row, @owner, @resource, resource: described, token: token, highest: row.pick(@column.name),
                                                      record: @record)
      end
    end
  end
end
