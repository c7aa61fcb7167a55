# frozen_string_literal: true

require "socket"

module LeaseMachines
  module Runtime
    # The label a `hold` gives the store with each grant ({Stores::HolderLabel}).
    module Label
      REPLACEMENT = "?"

      module_function

      def for(label, tags) = label.nil? ? default(tags) : Stores::HolderLabel.check(label)

      def default(tags)
        return process_label if tags.nil?

        clean([process_words, *tags.map { |key, value| utf8("#{key}=#{value}") }].join(" "))
      end

      # A hold without tags: the same label for every hold of the process, made once per process.
      def process_label
        label, pid = @process_label
        return label if pid == Process.pid

        @process_label = [clean(process_words), Process.pid].freeze
        @process_label.first
      end

      def clean(text)
        text = text.gsub(Stores::HolderLabel::CONTROL, REPLACEMENT)
        max = Stores::HolderLabel::MAX_BYTES
        text = text.byteslice(0, max).scrub("") if text.bytesize > max
        -text
      end

      def process_words
        words, pid = @process_words
        return words if pid == Process.pid

        @process_words = [-"#{utf8(Socket.gethostname)} pid #{Process.pid}", Process.pid].freeze
        @process_words.first
      end

      def utf8(word) = word.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: REPLACEMENT).scrub(REPLACEMENT)
    end
  end
end
