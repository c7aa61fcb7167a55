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

        text = +process_words
        tags.each { |key, value| text << " " << utf8("#{key}=#{value}") }
        clean(text)
      end

      # A hold without tags: the same label for every hold of the process, made once per process.
      def process_label
        label, pid = @process_label
        return label if pid == Process.pid

        @process_label = [clean(process_words), Process.pid].freeze
        @process_label.first
      end

      def clean(text)
        text = text.gsub(Stores::HolderLabel::CONTROL, REPLACEMENT) if text.match?(Stores::HolderLabel::CONTROL)
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

      # Our own strings (a tag's interpolation, the host's name): most are valid UTF-8 already, and kept as they are.
      def utf8(word)
        return word if word.encoding == Encoding::UTF_8 && word.valid_encoding?

        word.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: REPLACEMENT).scrub(REPLACEMENT)
      end
    end
  end
end
