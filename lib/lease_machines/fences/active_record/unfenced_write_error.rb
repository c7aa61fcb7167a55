# frozen_string_literal: true

module LeaseMachines
  # A plain write (save, save!, update, update!, update_attribute) of an
  # existing row of a fenced model ({Fences::Record}): it would write the row
  # without comparing tokens, so a stale worker could overwrite a newer
  # holder's write, or lower the row's token by assigning it. Raised before
  # anything is sent (ActiveRecord rolls back the save's transaction); write
  # the row with `fenced_update!` (or `fenced_update_all`, `fenced_upsert!`).
  # A LeaseMachines::Error, declared in errors.rb.
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
