# frozen_string_literal: true

require "erb"
require "uri"

module LeaseMachines
  class Web
    # What the views write: every value escaped as HTML from valid UTF-8, URLs, states and times in words.
    module HTML
      module_function

      def h(value) = ERB::Util.html_escape(utf8(value.to_s))

      def utf8(text)
        return text.dup.force_encoding(Encoding::UTF_8).scrub if [Encoding::UTF_8, Encoding::BINARY].include?(text.encoding)

        text.encode(Encoding::UTF_8, invalid: :replace, undef: :replace)
      end

      def url(path, params = {})
        params = params.reject { |_key, value| value.nil? || value == "" }
        return path if params.empty?

        "#{path}?#{URI.encode_www_form(params.transform_values { |value| utf8(value.to_s) })}"
      end

      def state(status)
        return "free" unless status.lease

        status.held? ? "held" : "expired"
      end

      def holder(status)
        return status.label unless status.label.to_s.empty?

        status.lease ? "owner #{status.lease.owner}" : "-"
      end

      def time_left(status)
        seconds = status.expires_in
        return "-" unless seconds
        return "expired #{span(-seconds)} ago" unless seconds.positive?

        span(seconds)
      end

      def span(seconds)
        return format("%.1f s", seconds) if seconds < 120
        return "#{(seconds / 60).floor} min" if seconds < 7200
        return "#{(seconds / 3600).floor} h" if seconds < 172_800

        "#{(seconds / 86_400).floor} d"
      end

      def time(value) = value ? value.utc.strftime("%Y-%m-%d %H:%M:%S UTC") : "-"
      def expiry(status) = status.lease ? time(Time.at(0, status.lease.expires_at_ns, :nsec)) : "-"
    end
  end
end
