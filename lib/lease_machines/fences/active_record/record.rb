# frozen_string_literal: true

module LeaseMachines
  module Fences
    # Row-level fencing for an ActiveRecord model (docs/FENCES.md, "Fenced rows"): every
    # row carries the token of the last lease that wrote it, and a fenced write updates
    # a row only when its token is NULL or at most the writer's, in the same UPDATE.
    #
    #   class Report < ApplicationRecord
    #     include LeaseMachines::Fences::Record
    #     fenced_by :lease_token  # store: true, strict: true, signing_keys: [...]: writes show a Pass
    #   end
    #   report.fenced_update!(token, body: text)                     # true, or FencedError
    #   Report.fenced_update_all(token, { day: today }, body: text)  # the number of rows updated
    #   Report.fenced_upsert!(token, { day: today, body: text }, unique_by: :day)
    #
    # A plain save of an existing row raises {UnfencedWriteError}.
    module Record
      DEFAULT_COLUMN = :lease_token

      def self.included(model)
        unless model.is_a?(Class) && model < ::ActiveRecord::Base
          raise TypeError, "#{self} must be included into an ActiveRecord model, not #{model.inspect}"
        end

        model.extend(ClassMethods)
        model.before_update(:refuse_unfenced_write)
      end

      # The class side: the configuration and the statements for many rows.
      module ClassMethods
        # Names the token column and declares its type ({TokenType}); once, in the class body.
        # @param store [Boolean] a write passes only with a token the store issued for its `resource:`
        # @param strict [Boolean] with store: only the token of the store's live lease
        # @param signing_keys [Array<String>, nil] a write passes only with the token's proof
        def fenced_by(column = DEFAULT_COLUMN, store: false, strict: false, signing_keys: nil)
          unless column.is_a?(Symbol) || column.is_a?(String)
            raise TypeError, "column must be a Symbol or a String (the token column), got #{column.inspect}"
          end

          name = column.to_s
          raise ArgumentError, "column must not be empty" if name.empty?

          admission = RowAdmission.from(store: store, strict: strict, signing_keys: signing_keys)
          attribute(name, TokenType.new(self, name))
          @fence_column = FenceColumn.new(self, name, admission)
        end

        # @api private
        # @return [FenceColumn] the checked column
        def fence_column
          column = @fence_column || (superclass.respond_to?(:fence_column) ? superclass.fence_column : nil)
          unless column
            raise ArgumentError, "#{name} has no token column: add `fenced_by :#{DEFAULT_COLUMN}` (or the column's " \
                                 "name) to the class"
          end

          column.checked
        end

        # One UPDATE of the rows matching `conditions` whose token is NULL or at most
        # `token` (and, bound, that the store admits), setting `attributes` and the token.
        # Like `update_all`: no validations, callbacks or timestamps.
        # @return [Integer] the number of rows updated (0 for token 0)
        def fenced_update_all(token, conditions, attributes)
          column = fence_column
          token, resource, owner = shown = column.admission.presented(self, token)
          values = Record.checked_attributes(attributes, column)
          if token.zero?
            Refusals.report(FencedError.new(resource: name, token: 0, highest: nil))
            return 0
          end

          matched = where(conditions)
          scope = column.admission.admitting(column.admitting(matched, token, owner), self, resource, token)
          updated = scope.update_all(values.merge(column.owner_values(token, owner)).merge(column.name => token))
          column.report_refused(self, matched, updated, shown) if Events.listened?(:fence_refused)
          updated
        end

        # Inserts the row, or overwrites it when its token is NULL or at most `token` ({Upsert}).
        # @return [true]
        # @raise [FencedError] when the existing row holds a greater token
        def fenced_upsert!(token, attributes, unique_by:)
          column = fence_column
          token, resource, owner = column.admission.presented(self, token)
          upsert = connection.adapter_name.match?(/mysql/i) ? MySQLUpsert : Upsert
          upsert.new(self, column, owner).run(token, Record.checked_attributes(attributes, column), unique_by, resource)
        end
      end

      # @api private
      def self.checked_attributes(attributes, column)
        raise TypeError, "attributes must be a Hash, got #{attributes.inspect}" unless attributes.is_a?(Hash)
        if attributes.key?(column.name) || attributes.key?(column.name.to_sym)
          raise ArgumentError, "attributes must not set #{column.name}: the fence writes the token"
        end

        attributes
      end

      # Writes the record's changes and `attributes` with one fenced UPDATE of its row ({RowUpdate}).
      # @return [true]
      # @raise [FencedError] when the row holds a greater token (or is gone): nothing was
      #   written, the record keeps its changes unsaved
      def fenced_update!(token, attributes = {})
        column = self.class.fence_column
        token, resource, owner = column.admission.presented(self.class, token)
        TestMode.current&.guard("#{self.class.name} id=#{id}", token)
        RowUpdate.new(self, column).run(token, Record.checked_attributes(attributes, column), resource, owner)
      end

      private

      # An existing row is written by the fenced forms only (they run no callbacks). A save
      # with nothing to write passes, and so does a create (`create!(..., lease_token:)`).
      def refuse_unfenced_write
        column = self.class.fence_column
        raise UnfencedWriteError.new(self, column.name) if has_changes_to_save?
      end
    end

    # One `record.fenced_update!`: one fenced UPDATE of the row, as optimistic locking does
    # it: when no row was updated the token and timestamps go back, the other changes stay unsaved.
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
        locking = @model.locking_column if @model.locking_enabled?
        written = [@column.name, *touched, locking].compact.to_h { |name| [name, @record[name]] }
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
        raise @column.refusal(@model, row, @owner, @resource, resource: described, token: token, highest: row.pick(@column.name),
                                                              record: @record)
      end
    end
  end

  # A plain write of an existing row of a fenced model: it would write without comparing
  # tokens. Raised before anything is sent (declared in errors.rb).
  class UnfencedWriteError
    # @return [ActiveRecord::Base] the record whose save was refused
    attr_reader :record

    def initialize(record, column)
      @record = record
      model = record.class.name
      super("#{model} id=#{record.id} is fenced by #{column}: a plain save would write it without comparing " \
            "tokens; write it with fenced_update!(token, attributes) (or #{model}.fenced_update_all, fenced_upsert!)")
    end
  end
end
