# frozen_string_literal: true

require "openssl"
require "securerandom"

module LeaseMachines
  class Web
    # The standalone app's CSRF protection, a signed double submit that needs no session.
    class CSRF
      COOKIE = "lease_machines_csrf"
      FIELD = "csrf_token"
      MIN_SECRET = 32
      VALUE = /\A[A-Za-z0-9_-]{43}\z/
      PATH = %r{\A/[A-Za-z0-9_./~-]*\z}
      private_constant :VALUE, :PATH

      def initialize(secret)
        unless secret.nil? || secret.is_a?(String)
          raise TypeError, "secret must be a String of at least #{MIN_SECRET} bytes, got #{secret.class}"
        end
        if secret && secret.bytesize < MIN_SECRET
          raise ArgumentError, "secret must be at least #{MIN_SECRET} bytes, got #{secret.bytesize}"
        end

        @secret = (secret || SecureRandom.bytes(MIN_SECRET)).b.freeze
        freeze
      end

      def cookie_value(request) = request.cookies[COOKIE].to_s[VALUE]
      def new_value = SecureRandom.urlsafe_base64(32)
      def field_for(value) = OpenSSL::HMAC.hexdigest("SHA256", @secret, value)

      def valid?(request)
        value = cookie_value(request)
        field = request.params[FIELD]
        return false unless value && field.is_a?(String)

        OpenSSL.secure_compare(field_for(value), field)
      end

      def set_cookie(value, request)
        path = request.script_name[PATH] || "/"
        "#{COOKIE}=#{value}; Path=#{path}; HttpOnly; SameSite=Lax#{'; Secure' if request.https?}"
      end
    end
  end
end
