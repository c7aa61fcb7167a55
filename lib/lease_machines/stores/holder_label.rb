# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A holder's own words for itself, kept with its lease for operators and never decided on
    # (docs/STORES.md, "Holder labels").
    module HolderLabel
      MAX_BYTES = 200
      # The label's columns (setup! adds them to an older table), and the token of the grant that wrote it.
      COLUMN = "holder_label"
      TOKEN_COLUMN = "holder_label_token"
      # A write that keeps the stored label (a renewal, a refusal that records the clock).
      KEEP = :keep
      # The label when the table has no column for it (made before it existed): nothing is written.
      UNSTORED = :unstored
      # C0 controls and DEL: a NUL PostgreSQL cannot store, a newline would break the CLI's table and logs.
      CONTROL = /[\x00-\x1f\x7f]/

      module_function

      # @return [String, nil] the label as a frozen UTF-8 String; never cut or scrubbed: shown as given, or refused.
      # The last label it returned (frozen, so unchanged since) is not checked again: `hold` sends the same one
      # with every grant.
      def check(label)
        return nil if label.nil?
        return label if label.equal?(@last_checked)
        # String === label asks the class, not the object (a BasicObject too).
        unless String === label # rubocop:disable Style/CaseEquality
          raise TypeError, "label must be a String or nil (the holder's own words), got #{Stores.described(label)}"
        end

        utf8 = Stores.utf8_name(label, "label")
        raise ArgumentError, "label must not be empty (nil: no label), got #{label.inspect}" if utf8.empty?

        if utf8.bytesize > MAX_BYTES
          raise ArgumentError, "label must be at most #{MAX_BYTES} bytes, got #{utf8.bytesize} bytes: " \
                               "#{utf8[0, 60].inspect}..."
        end
        raise ArgumentError, "label must not contain control characters, got #{utf8.inspect}" if utf8.match?(CONTROL)

        @last_checked = -utf8
      end

      # What a decision's write does with the stored label: the label on a grant, nil once no lease is held,
      # {KEEP} otherwise.
      def written(request, decision, after, label)
        return KEEP if label == UNSTORED
        return nil if after.fetch(1).nil?
        return label if request.grant? && decision.granted?

        KEEP
      end

      # The label as a status shows it: only when the current lease's grant wrote it (a grant that did not
      # write it must not show the last holder's as the new one's).
      def shown_sql(row) = "CASE WHEN #{row}#{TOKEN_COLUMN} = #{row}lease_token THEN #{row}#{COLUMN} END"

      # Each of `statements` (showing the label with `row`'s prefix) as a table made before the label's columns
      # reads it, looked up by identity.
      def unlabelled(statements, row)
        statements.to_h { |sql| [sql, sql.sub(shown_sql(row), "NULL").freeze] }.compare_by_identity.freeze
      end

      # A stored label as {Status#label} gives it: UTF-8, an invalid byte (a hand edit) scrubbed, frozen.
      def read(value) = value && -value.dup.force_encoding(Encoding::UTF_8).scrub
    end
  end
end
