# frozen_string_literal: true

require "uri"

module LeaseMachines
  class Web
    # One request to the standalone app, read with the standard library only (no Rack code).
    class Request
      MAX_BODY = 64 * 1024
      FORM = "application/x-www-form-urlencoded"
      private_constant :MAX_BODY, :FORM

      # A request this app cannot read (a bad %-escape, a body too large): answered 400 with the message.
      class BadRequest < Error; end

      attr_reader :env

      def initialize(env)
        @env = env
      end

      def method = @env["REQUEST_METHOD"]
      def path = @env["PATH_INFO"].to_s.then { |path| path.empty? ? "/" : path }
      def script_name = @env["SCRIPT_NAME"].to_s
      def https? = @env["HTTPS"] == "on" || @env["rack.url_scheme"] == "https"
      def params = @params ||= decode(@env["QUERY_STRING"].to_s, "query").merge(form)

      def cookies
        @cookies ||= @env["HTTP_COOKIE"].to_s.split(/;\s*/).each_with_object({}) do |pair, cookies|
          key, value = pair.split("=", 2)
          cookies[key] ||= value.to_s if key
        end
      end

      private

      def form
        return {} unless method == "POST" && @env["CONTENT_TYPE"].to_s.start_with?(FORM)

        input = @env["rack.input"]
        return {} unless input

        body = input.read(MAX_BODY + 1).to_s
        raise BadRequest, "the form is larger than #{MAX_BODY} bytes" if body.bytesize > MAX_BODY

        decode(body, "form")
      end

      def decode(text, what)
        URI.decode_www_form(text.b, Encoding::UTF_8).to_h
      rescue ArgumentError => e
        raise BadRequest, "the #{what} cannot be read: #{e.message}"
      end
    end
  end
end
