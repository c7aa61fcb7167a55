# frozen_string_literal: true

require "socket"

module LeaseMachines
  module Runtime
    # The label a `hold` gives the store with each grant
    # ({Stores::HolderLabel}): the caller's, checked, or the runtime's own,
    # "host pid 4242" and the hold's `tags:` ("job=ReportJob jid=7f3a"),
    # made when the hold starts (in the process that holds).
    module Label
      # What replaces a control character of a tag in the default label.
      REPLACEMENT = "?"

      module_function

      # @param label [String, nil] the caller's (nil: the default)
      # @param tags [Hash, nil] the hold's checked `tags:`
      # @return [String] a label {Stores::HolderLabel.check} accepts
      # @raise [TypeError, ArgumentError] a given label that check refuses
      def for(label, tags)
        return Stores::HolderLabel.check(label) unless label.nil?

        default(tags)
      end

      # "host pid 4242 job=ReportJob jid=7f3a": never refused, since nobody
      # chose it (a control character becomes "?", the end past
      # {Stores::HolderLabel::MAX_BYTES} is cut at a character).
      def default(tags)
        words = [process_words, *tags&.map { |key, value| utf8("#{key}=#{value}") }]
        text = words.join(" ").gsub(Stores::HolderLabel::CONTROL, REPLACEMENT)
        max = Stores::HolderLabel::MAX_BYTES
        text = text.byteslice(0, max).scrub("") if text.bytesize > max
        -text
      end

      # "host pid 4242", made once per process.
      def process_words
        words, pid = @process_words
        return words if pid == Process.pid

        words = -"#{utf8(Socket.gethostname)} pid #{Process.pid}"
        @process_words = [words, Process.pid].freeze
        words
      end

      # A word in UTF-8, what is not replaced by {REPLACEMENT}.
      def utf8(word)
        word.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: REPLACEMENT).scrub(REPLACEMENT)
      end
    end
  end
end
