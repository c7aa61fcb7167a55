# frozen_string_literal: true

module LeaseMachines
  module Stores
    # A holder's label: its own words for itself (host, pid, job class and
    # id), kept with its lease for operators ({Status#label}, the CLI, the
    # events). Nothing decides on it: the core never sees it, two owners with
    # one label are two holders, and the store writes it in the transaction
    # of the grant it labels (docs/STORES.md, "Holder labels").
    module HolderLabel
      # The longest label, in bytes of UTF-8.
      MAX_BYTES = 200
      # The columns of the stores' table (added by setup! to a table made
      # before them): the label, and the token of the grant that wrote it.
      COLUMN = "holder_label"
      TOKEN_COLUMN = "holder_label_token"
      # What a write does with the stored label when the lease goes on (a
      # renewal, a refusal that records the clock): nothing.
      KEEP = :keep
      # The label a decision carries when the store's table has no column for
      # it (made before it existed): nothing is written.
      UNSTORED = :unstored
      # C0 controls and DEL: a NUL PostgreSQL cannot store, a newline or a
      # tab would break the CLI's table and the log lines.
      CONTROL = /[\x00-\x1f\x7f]/

      module_function

      # @param label [String, nil]
      # @return [String, nil] the label's bytes as a frozen UTF-8 String
      # @raise [TypeError] not a String; [ArgumentError] empty, longer than
      #   {MAX_BYTES}, not UTF-8, or with a control character (never cut or
      #   scrubbed: a label is shown as it was given, or refused)
      def check(label)
        return nil if label.nil?
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

        -utf8
      end

      # What one decision's write does with the stored label: the grant's
      # label on a grant (acquire, reacquire; another owner's grant replaces
      # the last holder's), nil once the row holds no lease (a release), and
      # {KEEP} otherwise (a renewal writes only its own columns).
      # @param after [Array<String, nil>] the five columns being written
      # @return [String, nil, Symbol]
      def written(request, decision, after, label)
        return KEEP if label == UNSTORED
        return nil if after.fetch(1).nil?
        return label if request.grant? && decision.granted?

        KEEP
      end

      # The label as a status reads it (`row`: the table's alias, or ""):
      # only when the current lease's grant wrote it. A grant made without
      # writing it (a process of a version before labels, or one that found
      # no column) leaves the last holder's label in the row: never shown as
      # the new holder's.
      def shown_sql(row)
        "CASE WHEN #{row}#{TOKEN_COLUMN} = #{row}lease_token THEN #{row}#{COLUMN} END"
      end

      # A stored label as {Status#label} gives it: UTF-8, an invalid byte
      # (a hand edit) replaced by U+FFFD, frozen; nil stays nil.
      def read(value)
        return nil if value.nil?

        -value.dup.force_encoding(Encoding::UTF_8).scrub
      end
    end
  end
end
